#!/bin/sh
# Process trees under vmha: a shell pipeline, a shell that starts programs
# (busybox sh when installed, else /bin/sh) and Python's subprocess print
# what they print natively, under `vmha run` and under `vmha run --backup`
# in both modes (fork, exec, wait and the pipes between the processes, one
# checkpoint of the whole tree per epoch).
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
for p in /bin/bash /usr/bin/seq /usr/bin/sort /usr/bin/md5sum /usr/bin/python3; do
  [ -x "$p" ] || { echo "SKIP: $p is not installed"; exit 77; }
done
vmha_repl_setup
cd "$T" || exit 1
fail=0
# sort's temporary files in the working directory (the guest's only
# writable place), natively too.
export TMPDIR=.
mkdir tree && touch tree/a tree/b tree/c

# plain NAME PROGRAM ARGS...: under `vmha run` the output and exit status
# are native's.
plain() {
  _name=$1; shift
  "$@" > native.out 2>/dev/null; _nrc=$?
  "$VMHA" run -- "$@" > vmha.out 2> vmha.err; _rc=$?
  if [ "$_rc" != "$_nrc" ] || ! cmp -s native.out vmha.out; then
    echo "FAIL: $_name: exit $_rc (native $_nrc)"; diff native.out vmha.out | head -5; cat vmha.err; fail=1
  else
    echo "ok: $_name"
  fi
}

SHELL_PROG=/bin/sh
command -v busybox >/dev/null && SHELL_PROG="$(command -v busybox) sh"
PY='import subprocess; print(subprocess.run(["echo","x"], capture_output=True).stdout)'
plain "bash pipeline" /bin/bash -c 'seq 1 200000 | sort -n | md5sum'
plain "$SHELL_PROG" $SHELL_PROG -c 'echo hi; ls tree | wc -l'
plain "python3 subprocess" /usr/bin/python3 -c "$PY"
plain "exit status of a pipeline" /bin/bash -c 'set -o pipefail; echo x | (cat; exit 3) | cat'
# make -j2 of a small C project with gcc from the read-only system paths
# (recipes without shell syntax: make runs them itself, /bin/sh is not in
# the policy); the program it built prints what the native build's does.
if [ -x /usr/bin/make ] && [ -x /usr/bin/gcc ]; then
  for d in native vmha; do
    mkdir "make.$d"
    printf 'int f(void) { return 41; }\n' > "make.$d/a.c"
    printf '#include <stdio.h>\nint f(void);\nint main(void) { printf("%%d\\n", f() + 1); return 0; }\n' > "make.$d/b.c"
    printf 'prog: a.o b.o\n\t$(CC) -o prog a.o b.o\n%%.o: %%.c\n\t$(CC) -c $< -o $@\n' > "make.$d/Makefile"
  done
  # not the make that runs this test's flags and jobserver
  unset MAKEFLAGS MFLAGS MAKELEVEL
  (cd make.native && /usr/bin/make -s --no-print-directory -j2 CC=/usr/bin/gcc && ./prog) > native.out 2>&1
  (cd make.vmha && "$VMHA" run -- /usr/bin/make -s --no-print-directory -j2 CC=/usr/bin/gcc 2> ../make.err && ./prog) > vmha.out 2>&1
  if cmp -s native.out vmha.out && [ "$(cat vmha.out)" = 42 ]; then
    echo "ok: make -j2"
  else
    echo "FAIL: make -j2: $(cat vmha.out)"; cat make.err; fail=1
  fi
fi
check_replicated "bash pipeline" /bin/bash -c 'seq 1 200000 | sort -n | md5sum'
check_replicated "python3 subprocess" /usr/bin/python3 -c "$PY"
exit $fail
