# make fuzz: builds each fuzz target with clang++-14 and libFuzzer (ASan +
# UBSan) from the library sources it needs, then runs each for a bounded time.
# Invoked by the top-level `make fuzz` (tests/fuzz/Makefile.inc) with
# top_srcdir, top_builddir, CLANGXX and the pkg-config flags; plain GNU make.
#
# Objects, binaries, new corpus entries, crashes and logs go to
# $(top_builddir)/fuzz; the seed corpus in the source tree is only read.

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= trace cluster philly pai gavel node_speeds sacct slurm_nodes scenario_spec duet_conf preempt_state job_inputs model_file elf frame checkpoint handshake
FUZZ_DIR := $(top_builddir)/fuzz

# Library sources each target needs (its own tests/fuzz/<target>.cc aside).
POLICY_CSV := policy/io/csv.cc
src_trace := policy/io/trace.cc $(POLICY_CSV)
src_cluster := policy/io/cluster.cc $(POLICY_CSV)
src_philly := policy/io/philly.cc policy/io/trace.cc $(POLICY_CSV)
src_pai := policy/io/pai.cc policy/io/cluster.cc $(POLICY_CSV)
src_gavel := policy/model/gavel.cc policy/model/throughput.cc $(POLICY_CSV)
src_node_speeds := policy/io/node_speeds.cc $(POLICY_CSV)
src_sacct := replay/sacct.cc replay/sacct_trace.cc replay/emu_nodes.cc policy/util/hostlist.cc policy/io/trace.cc \
	policy/io/node_speeds.cc $(POLICY_CSV)
src_slurm_nodes := replay/slurm_nodes.cc policy/io/cluster.cc policy/io/node_speeds.cc $(POLICY_CSV)
src_scenario_spec := policy/scenario/spec.cc policy/scenario/families.cc $(POLICY_CSV)
src_duet_conf := plugins/seam/duet_conf.cc plugins/seam/file_trust.cc plugins/seam/site_factor_scale.cc
src_preempt_state := plugins/seam/preempt_state.cc
src_job_inputs := plugins/seam/job_hints.cc plugins/spank/lib/ha_settings.cc
# The torch-free model file decoder (libduetlearn_model.la, and what it needs of libduetlearn_gp.la).
src_model_file := policy/learn/model/model_file.cc policy/learn/model/spread_sets.cc policy/learn/model/net_config.cc \
	policy/learn/gp/binary_io.cc policy/learn/gp/gp_hyper.cc policy/learn/gp/machine_graph.cc
src_elf := vmha/common/status.cc vmha/vmm/elf_image.cc vmha/vmm/program_loader.cc vmha/mem/address_space.cc \
	vmha/mem/page_table.cc vmha/mem/guest_memory.cc vmha/track/vmm_write_log.cc vmha/sys/confinement.cc \
	vmha/sys/confinement_links.cc vmha/sys/confinement_places.cc vmha/common/remove_tree.cc
VMHA_PROTOCOL := vmha/protocol/frame.cc vmha/protocol/messages.cc vmha/protocol/crc32c.cc
src_frame := $(VMHA_PROTOCOL)
src_checkpoint := $(VMHA_PROTOCOL) vmha/backup/image_store.cc vmha/checkpoint/checkpoint_receiver.cc
src_handshake := $(VMHA_PROTOCOL) vmha/transport/handshake_fuzz_entry.cc vmha/transport/frame_reader.cc \
	vmha/transport/handshake.cc vmha/transport/auth_shared_key.cc

SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
CXXFLAGS_FUZZ := -std=c++20 -g -O1 -fno-omit-frame-pointer $(SANITIZE) -fsanitize=fuzzer-no-link \
	-I$(top_srcdir) -I$(top_builddir) $(EIGEN_CFLAGS) $(FMT_CFLAGS) $(NLOHMANN_JSON_CFLAGS)
LDFLAGS_FUZZ := $(SANITIZE) -fsanitize=fuzzer
LIBS_FUZZ := $(FMT_LIBS) -lnettle -lpthread

obj = $(FUZZ_DIR)/obj/$(1:.cc=.o)
BINS := $(addprefix $(FUZZ_DIR)/bin/,$(FUZZ_TARGETS))

.PHONY: all run check-toolchain
all: $(BINS)

run: $(BINS)
	@FUZZ_FLAGS='$(FUZZ_FLAGS)' $(SHELL) $(top_srcdir)/tests/fuzz/run-fuzz.sh $(FUZZ_DIR) $(top_srcdir) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Says what is missing before 100 compiler errors do.
$(FUZZ_DIR)/toolchain.ok:
	@mkdir -p $(FUZZ_DIR)
	@printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
	  > $(FUZZ_DIR)/toolchain.cc
	@$(CLANGXX) $(LDFLAGS_FUZZ) -o $(FUZZ_DIR)/toolchain $(FUZZ_DIR)/toolchain.cc 2> $(FUZZ_DIR)/toolchain.log || { \
	  cat $(FUZZ_DIR)/toolchain.log >&2; \
	  echo "make fuzz: $(CLANGXX) cannot link a libFuzzer target; on Debian 12: apt-get install clang-14 libfuzzer-14-dev" >&2; \
	  exit 1; }
	@touch $@

$(FUZZ_DIR)/obj/%.o: $(top_srcdir)/%.cc $(FUZZ_DIR)/toolchain.ok
	@mkdir -p $(@D)
	@echo "  CLANG    $*.cc"
	@$(CLANGXX) $(CXXFLAGS_FUZZ) -MMD -MP -c -o $@ $<

define link_rule
$(FUZZ_DIR)/bin/$(1): $(call obj,tests/fuzz/$(1).cc) $(foreach s,$(src_$(1)),$(call obj,$(s)))
	@mkdir -p $$(@D)
	@echo "  LINK     fuzz/bin/$(1)"
	@$(CLANGXX) $(LDFLAGS_FUZZ) -o $$@ $$^ $(LIBS_FUZZ)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call link_rule,$(t))))

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
