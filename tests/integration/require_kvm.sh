# require_kvm (sourced by the vmha test libraries; POSIX sh): returns with
# /dev/kvm usable, exits 77 (Automake SKIP) on a host without /dev/kvm, and
# 99 (ERROR, a failure) when /dev/kvm is here but cannot be used: on a host
# with KVM a vmha test does not skip. DUET_TEST_WITHOUT=kvm makes it missing.
require_kvm() {
  if [ ! -e /dev/kvm ]; then
    echo "SKIP: no /dev/kvm on this host (vmha needs KVM)"; exit 77
  fi
  case ",${DUET_TEST_WITHOUT:-}," in
    *,kvm,*) echo "FAIL: DUET_TEST_WITHOUT names kvm, but /dev/kvm is here: a vmha test does not skip on a host with KVM"
             exit 99 ;;
  esac
  if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
    echo "FAIL: /dev/kvm is here but not readable and writable: run as root or in group kvm (a vmha test does not skip on a host with KVM)"
    exit 99
  fi
}
