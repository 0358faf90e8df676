# A thin layer over swift. `make` builds the release binary and its HTTPS helper, and from ck
# the man page and the shell completions; `make install` copies them (it never builds: `sudo
# make install` after `make` runs no compiler as root); `make test` runs every test but the
# long durability loops, which `make stress` runs (CI runs both: .ci/run).
PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
CONFIG ?= release

BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

# On Linux ck is one static executable (the Swift runtime, Foundation and the C library linked
# in): no dynamic loader, no symbol lookups or relocations at start-up. `ck account` starts in
# 1.6 ms instead of 3.9 ms (and 14 ms with Foundation loaded dynamically), which every command,
# every page process of a script and every hook pays. STATIC= builds the default way.
# Linked with lld, the toolchain's own linker: gold warns ~19 times that glibc's dlopen, getpwnam
# and getaddrinfo need glibc's shared libraries at run time in a static program. That is what
# static linking means, and ck needs them only to resolve `ck serve --host NAME` (an address or
# localhost needs nothing).
STATIC ?= $(if $(filter Linux,$(shell uname -s)),-Xswiftc -static-executable -Xswiftc -use-ld=lld,)
# Every module reaches the metadata of a concrete generic type (`[String: JSONValue]`, …)
# through an accessor the compiler emits, not through its mangled name: demangled at its first
# use, each generic requirement of it made the runtime scan all 5,391 protocol conformances of
# the executable, once per process — 35–39 % of a short command's instructions
# (Docs/benchmarks.md, the tenth session). A frontend flag: it changes how metadata is found,
# nothing else. Set here, not in Package.swift, so that the package's library products carry
# no unsafe flags (SwiftPM before 6.2 refuses those in a dependency).
METADATA ?= -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors

# Where the release build goes (CI builds it beside the tests, in a directory of its own: two
# SwiftPM builds never share one).
SCRATCH ?= .build
BIN = $(SCRATCH)/$(CONFIG)/ck

# ck-remote-https, the helper ck speaks HTTPS through (Docs/remote.md, "HTTPS"): ck has no TLS
# of its own, and Debian's libcurl cannot be linked into a static executable. The helper links
# the Swift runtime and Foundation statically and the system's libcurl (and its TLS) dynamically.
# It has its own build directory: its flags differ from ck's, and switching flags in one
# directory would rebuild ck every time. Copied beside ck, where ck looks for it.
HELPER_BUILD = .build/remote-https
HELPER_BIN = $(SCRATCH)/$(CONFIG)/ck-remote-https
# Debian ships libcurl.so (the name the linker asks for) only in libcurl4-openssl-dev; a
# one-line linker script of that name points at the runtime library every Swift install has.
CURL_LINK = $(abspath .build/curl-link)
HELPER_FLAGS ?= $(if $(filter Linux,$(shell uname -s)),-Xswiftc -static-stdlib -Xswiftc -use-ld=lld -Xlinker -L$(CURL_LINK),)
# What the built ck generates, laid out as it is installed under $(PREFIX)/share.
GEN = .build/share
MAN = $(GEN)/man/man1/ck.1
BASHCOMP = $(GEN)/bash-completion/completions/ck
ZSHCOMP = $(GEN)/zsh/site-functions/_ck
FISHCOMP = $(GEN)/fish/vendor_completions.d/ck.fish
GENERATED = $(MAN) $(BASHCOMP) $(ZSHCOMP) $(FISHCOMP)
# The generated files depend on the command table only: run ck with nothing from the caller's
# environment (no CK_* variable, no data directory it could touch).
CK_GEN = env -i CK_DATA_DIR=/nonexistent/ck-generate $(BIN)

.PHONY: all build helper generate debug test bench stress install uninstall clean

all: build

build:
	$(SWIFT) build -c $(CONFIG) $(STATIC) $(METADATA) --scratch-path $(SCRATCH) --product ck
	@$(MAKE) --no-print-directory helper
	@$(MAKE) --no-print-directory generate

helper:
	@mkdir -p $(CURL_LINK) && echo 'INPUT(libcurl.so.4)' > $(CURL_LINK)/libcurl.so
	$(SWIFT) build -c $(CONFIG) --scratch-path $(HELPER_BUILD) $(HELPER_FLAGS) --product ck-remote-https
	@mkdir -p $(dir $(HELPER_BIN)) && cp -f $(HELPER_BUILD)/$(CONFIG)/ck-remote-https $(HELPER_BIN).tmp && mv $(HELPER_BIN).tmp $(HELPER_BIN)

# Written to a temporary file first, so a failure leaves no half file to install.
generate:
	@mkdir -p $(dir $(GENERATED))
	$(CK_GEN) man > $(MAN).tmp && mv $(MAN).tmp $(MAN)
	$(CK_GEN) completion bash > $(BASHCOMP).tmp && mv $(BASHCOMP).tmp $(BASHCOMP)
	$(CK_GEN) completion zsh > $(ZSHCOMP).tmp && mv $(ZSHCOMP).tmp $(ZSHCOMP)
	$(CK_GEN) completion fish > $(FISHCOMP).tmp && mv $(FISHCOMP).tmp $(FISHCOMP)

debug:
	$(SWIFT) build

# The long durability loops: a crash at every disk operation (CrashRecoveryTests, a purge's),
# a full disk at every one, kill -9 at random moments (KillLoopTests, a bulk import's), links
# planted at every level of a store, each attacked by every kind of command, and the index and
# paging answers compared with scans over thousands of records (IndexTests, QueryAllTests).
# `make test` skips them; `make stress` runs them on the debug binary `make test` tested (CI's
# clean build is then one build, not two); `make && make stress STRESS_CK=.build/release/ck` runs
# them on the release binary.
STRESS_TESTS = EndToEndTests\.(CrashRecoveryTests|FullDiskTests|KillLoopTests|IndexTests|QueryAllTests)|EndToEndTests\.PurgeAndDropTests/testAPurgeInterruptedByACrashIsFinishedOnce|EndToEndTests\.BulkImportTests/testAKilledImportThenAnotherWriteLosesNothingItReported|EndToEndTests\.HostilePathTests/testPlantedLinks
# Loops `make test` runs once that `make stress` runs again, longer.
SCALED_TESTS = EndToEndTests\.(ConcurrentReaderTests|ConcurrencyTests|HostilePathTests)
# How much longer `make stress` runs the random loops than once (`make stress SCALE=1`: once,
# as CI does).
SCALE ?= 10
STRESS_CK ?= .build/debug/ck

# Builds the debug binary first: the end-to-end tests run it. The in-process tests run two at
# a time (--parallel: each in a process of its own, in its own temporary directory; ck serve's
# in-process suites among them); the
# end-to-end ones one at a time, as some time what the binary does (a reader gone within a
# second, a --follow stopped) and two at once on 2 cores would make that a matter of luck.
test: debug
	$(SWIFT) test --disable-swift-testing --parallel --filter 'CKJSONTests|CKCryptoTests|CKHTTPTests|CKCoreTests|CKCLITests|CKServeTests|CKRemoteTests'
	$(SWIFT) test --disable-swift-testing --filter EndToEndTests --skip '$(STRESS_TESTS)'

bench: build
	bash bench/run.sh

stress: debug
	CK=$(abspath $(STRESS_CK)) SCALE=$(SCALE) STRESS_TESTS='$(STRESS_TESTS)|$(SCALED_TESTS)' bash bench/stress.sh

# Copies what `make` built; builds nothing.
install:
	@for f in $(BIN) $(HELPER_BIN) $(GENERATED); do \
	  if [ ! -f $$f ]; then echo "make install: $$f is missing: run make first" >&2; exit 1; fi; \
	  if [ $(BIN) -nt $$f ]; then echo "make install: $$f is older than $(BIN): run make first" >&2; exit 1; fi; \
	done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/ck
	install -m 0755 $(HELPER_BIN) $(DESTDIR)$(BINDIR)/ck-remote-https
	install -m 0644 $(MAN) $(DESTDIR)$(MANDIR)/man1/ck.1
	install -m 0644 $(BASHCOMP) $(DESTDIR)$(BASHCOMPDIR)/ck
	install -m 0644 $(ZSHCOMP) $(DESTDIR)$(ZSHCOMPDIR)/_ck
	install -m 0644 $(FISHCOMP) $(DESTDIR)$(FISHCOMPDIR)/ck.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ck $(DESTDIR)$(BINDIR)/ck-remote-https $(DESTDIR)$(MANDIR)/man1/ck.1 $(DESTDIR)$(BASHCOMPDIR)/ck \
	  $(DESTDIR)$(ZSHCOMPDIR)/_ck $(DESTDIR)$(FISHCOMPDIR)/ck.fish

clean:
	rm -rf .build
