# agentmeterd: one flat Makefile. `make`, `make check`, `make run`, `make bench`, `make install`,
# `make deb` (the Debian package, debian/).
# BUILD=dir keeps objects apart (make check also builds BUILD=build-asan with sanitizers).

PKGS     := libsystemd json-c lmdb libzstd sqlite3 libxxhash libpq
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   := $(PREFIX)/bin
MANDIR   := $(PREFIX)/share/man
# The user manager reads units from <prefix>/lib/systemd/user for system-wide
# prefixes and from ~/.local/share/systemd/user for PREFIX=~/.local.
ifeq ($(PREFIX),$(HOME)/.local)
USERUNITDIR ?= $(HOME)/.local/share/systemd/user
else
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
endif
# Completions where each shell looks under PREFIX (bash-completion and fish
# search every XDG data directory; zsh's fpath has vendor-completions for
# /usr and site-functions for /usr/local).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
endif
VERSION  := 0.1.0

CC       ?= cc
# _FORTIFY_SOURCE as the Debian package builds (dpkg-buildflags): its checks
# (warn_unused_result on getrandom, write...) fail here first, not in `make deb`
OPT      ?= -O2 -g -D_FORTIFY_SOURCE=2
SAN      ?=
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wpointer-arith -Wformat=2 -Wno-format-nonliteral -Wvla
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libpq is loaded with dlopen when a team ledger is used (common/team-ledger/pq.h): its
# headers only, never linked (it would load 24 shared objects into every start)
PKG_LIBS   = $(shell pkg-config --libs $(filter-out libpq,$(PKGS)) 2>/dev/null)
# ncurses only for `agentmeterctl top` (ctl/top/top.c): the daemon never links it.
CURSES_CFLAGS = $(shell pkg-config --cflags ncursesw 2>/dev/null)
CURSES_LIBS   = $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
# CPPFLAGS, CFLAGS and LDFLAGS from the environment come last (dpkg-buildflags'
# hardening for the Debian package).
ALL_CFLAGS = -std=gnu17 $(OPT) $(SAN) $(WARN) -D_GNU_SOURCE -DAM_VERSION='"$(VERSION)"' \
             -Icommon -Iadapters -Idaemon -Ictl $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDLIBS = $(SAN) $(PKG_LIBS) -lm $(LDLIBS)

# Every .c below common/, adapters/ and daemon/ (their rooms one folder deep)
# but the daemon's main; agentmeterctl's likewise below ctl/.
rooms       = $(wildcard $(1)/*.c $(1)/*/*.c)
LIB_SRC    := $(call rooms,common) $(call rooms,adapters) \
              $(filter-out daemon/agentmeterd.c,$(call rooms,daemon))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/prices-data.o
CTL_SRC    := $(filter-out ctl/agentmeterctl.c,$(call rooms,ctl))
CTL_OBJ    := $(CTL_SRC:%.c=$(BUILD)/%.o)
# Unit tests mirror the tree (tests/unit/common/ledger/test-ledger.c tests
# common/ledger/); each binary is $(BUILD)/tests/test-NAME, names unique.
UNIT_SRC   := $(shell find tests/unit -name 'test-*.c' | sort)
UNIT_BIN   := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(UNIT_SRC)))
TOOL_SRC   := $(wildcard tests/bench/*.c) $(wildcard tests/lib/*.c)
TOOL_BIN   := $(TOOL_SRC:tests/%.c=$(BUILD)/tools/%)
HEADERS    := $(foreach r,common adapters daemon ctl,$(wildcard $(r)/*.h $(r)/*/*.h)) \
              $(shell find tests/unit -name '*.h')
# Fuzz targets: one line-parser target per adapter in the registry, plus the
# protocol, the ledger's binary values, time parsing, compressed sources
# (common/zstream.h) and OpenClaw archive records. `all` builds each
# as a replay binary (gcc, no libFuzzer) that make check runs over the seeds;
# `make fuzz` builds them with clang's libFuzzer and fuzzes each for a while.
ADAPTERS     := $(shell sed -n 's/^[[:space:]]*X(\([a-z_]*\)).*/\1/p' adapters/registry.h)
FUZZ_TARGETS := $(ADAPTERS:%=lines-%) proto decode time zstream archive
FUZZ_REPLAY  := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay-%)
FUZZ_SECONDS ?= 60

.PHONY: all fuzz torture deps deps-quiet deps-deb deps-fuzz check check-unit check-asan check-systemd run \
        bench install uninstall clean lint-man deb lint-deb

all: $(BUILD)/agentmeterd $(BUILD)/agentmeterctl $(UNIT_BIN) $(TOOL_BIN) $(FUZZ_REPLAY)

$(BUILD)/%.o: %.c $(HEADERS) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The built-in price table: data/prices.conf as a C string (pricing.h).
$(BUILD)/gen/prices-data.c: data/prices.conf data/embed.sh
	@mkdir -p $(dir $@)
	data/embed.sh pricing_builtin_text $< > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/prices-data.o: $(BUILD)/gen/prices-data.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libagentmeter.a: $(LIB_OBJ)
	@rm -f $@
	ar rcsT $@ $^

# The daemon's libraries are linked statically too, all but libsystemd
# (Debian ships it shared only): `agentmeterd --once` is a command a user
# waits for, and it loaded fifteen shared objects at every start (`perf stat
# -r 50 agentmeterd --version`: 2.9 ms dynamic, 2.2 ms static).
# DAEMON_STATIC=0 links them dynamically (the Debian package does).
# The libraries both programs link statically by default (Debian's -dev
# archives have them): the daemon adds libsystemd, the client ncurses.
STATIC_LIBS = -ljson-c -llmdb -lzstd -lsqlite3 -lxxhash
DAEMON_STATIC ?= 1
ifeq ($(DAEMON_STATIC),1)
DAEMON_LDLIBS = $(SAN) -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic -lsystemd -lm -lpthread $(LDLIBS)
else
DAEMON_LDLIBS = $(ALL_LDLIBS)
endif

$(BUILD)/agentmeterd: $(BUILD)/daemon/agentmeterd.o $(BUILD)/libagentmeter.a
	$(CC) $(LDFLAGS) -o $@ $^ $(DAEMON_LDLIBS)

$(BUILD)/libagentmeterctl.a: $(CTL_OBJ)
	@rm -f $@
	ar rcsT $@ $^

$(BUILD)/ctl/top/top.o: ALL_CFLAGS += $(CURSES_CFLAGS)

# XXH3's AVX2 variant (common/hash/xxh.h), chosen at run time on CPUs that have it
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine)),)
$(BUILD)/common/hash/xxh-avx2.o: ALL_CFLAGS += -mavx2
endif

# agentmeterctl starts once per status line and per report, so its libraries
# are linked statically by default: loading eleven shared objects was half of
# its CPU (`perf stat -r 100 agentmeterctl report daily --json`: 1.56 ms
# dynamic, 0.86 ms static). CTL_STATIC=0 links them dynamically. The tests
# always link dynamically.
CTL_STATIC ?= 1
ifeq ($(CTL_STATIC),1)
CTL_LDLIBS = $(SAN) -Wl,-Bstatic $(STATIC_LIBS) -lncursesw -ltinfo \
             -Wl,-Bdynamic -lm -lpthread $(LDLIBS)
else
CTL_LDLIBS = $(ALL_LDLIBS) $(CURSES_LIBS)
endif

$(BUILD)/agentmeterctl: $(BUILD)/ctl/agentmeterctl.o $(BUILD)/libagentmeterctl.a $(BUILD)/libagentmeter.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CTL_LDLIBS)


# the tests' own headers (tap.h, testutil.h) from any depth of tests/unit
$(BUILD)/tests/unit/%.o: ALL_CFLAGS += -Itests/unit

define unit_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/$(1:.c=.o) $(BUILD)/libagentmeterctl.a $(BUILD)/libagentmeter.a
	@mkdir -p $$(dir $$@)
	$$(CC) -o $$@ $$^ $$(ALL_LDLIBS)
endef
$(foreach t,$(UNIT_SRC),$(eval $(call unit_test_rule,$(t))))

$(BUILD)/tools/%: $(BUILD)/tests/%.o $(BUILD)/libagentmeter.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/fuzz/lines-%.o: tests/fuzz/fuzz-lines.c $(HEADERS) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DFUZZ_ADAPTER='"$*"' -c -o $@ $<

$(BUILD)/fuzz/%.o: tests/fuzz/fuzz-%.c $(HEADERS) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/replay-%: $(BUILD)/fuzz/%.o $(BUILD)/tests/fuzz/replay-main.o $(BUILD)/libagentmeter.a
	$(CC) -o $@ $^ $(ALL_LDLIBS)

$(BUILD)/fuzz/fuzz-%: $(BUILD)/fuzz/%.o $(BUILD)/libagentmeter.a
	$(CC) -fsanitize=fuzzer -o $@ $^ $(ALL_LDLIBS)

# make fuzz: each target for FUZZ_SECONDS (default 60) with clang's
# libFuzzer under ASan/UBSan, corpora seeded from fixtures/, the target's
# seeds (tests/fuzz/seeds/<target>/) and the kept regressions
# (tests/fuzz/regressions/<target>/); a crash stops the run and leaves its
# input in build-fuzz/crash-<target>-*. Needs clang (tests/deps.sh fuzz).
fuzz: deps-fuzz
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT="-O1 -g" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link" \
	    $(FUZZ_TARGETS:%=build-fuzz/fuzz/fuzz-%)
	tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# make torture: the crash torture of make check, 1,000 rounds instead of 20.
torture: deps all
	AM_TORTURE_ROUNDS=$${AM_TORTURE_ROUNDS:-1000} AM_SRCDIR=$(CURDIR) \
	    AM_BUILD=$(abspath $(BUILD)) bash tests/system/torture.t

# Debian packages the build and the tests need; silent and idempotent.
# NODEPS=1 skips it (the package build: its Build-Depends are installed).
deps:
	@tests/deps.sh
deps-quiet:
	@[ -n "$(NODEPS)" ] || tests/deps.sh
deps-deb:
	@tests/deps.sh deb
deps-fuzz:
	@tests/deps.sh fuzz

# All tests: unit + system under the normal build, then again under ASan/UBSan,
# the read pool's threads under ThreadSanitizer, then the real systemd --user tests. TAP through prove; CI reads its summary.
# The three builds compile on every core (CHECK_JOBS; `make check` alone
# would compile one file at a time: 4.5 of the suite's minutes on 2 cores).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) all
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" all
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) BUILD=build-tsan OPT="-O1 -g" SAN="-fsanitize=thread" \
	    build-tsan/tests/test-read-pool
	tests/run-all.sh $(BUILD) build-asan

check-unit: all
	AM_BUILD=$(abspath $(BUILD)) prove --exec '' $(UNIT_BIN)

run: deps all
	$(BUILD)/agentmeterd $(RUN_ARGS)

bench: deps all
	tests/bench/run.sh $(abspath $(BUILD))
	tests/bench/harnesses.sh $(abspath $(BUILD))
	/usr/bin/python3 tests/bench/probes.py $(abspath $(BUILD))
	tests/bench/team.sh $(abspath $(BUILD))
	/usr/bin/python3 tests/bench/opencode_waiting.py $(abspath $(BUILD))
	/usr/bin/python3 tests/bench/web_latency.py $(abspath $(BUILD))
	@# the scale runs need ~10 GB of disk and a quarter of an hour each: opt in
	[ -z "$(AM_BENCH_TEAM_SCALE)" ] || tests/bench/team-scale.sh $(abspath $(BUILD))

lint-man:
	mandoc -Tlint -Wwarning man/agentmeterd.8 man/agentmeterctl.1

# The programs, their man pages, the user unit, and the completion scripts
# as `agentmeterctl completion SHELL` prints them. `make -o all install`
# installs what is built without building anything (the package does so).
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(USERUNITDIR) \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 $(BUILD)/agentmeterd $(BUILD)/agentmeterctl $(DESTDIR)$(BINDIR)/
	install -m 0644 man/agentmeterctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/agentmeterd.8 $(DESTDIR)$(MANDIR)/man8/
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/agentmeterd.service.in > $(DESTDIR)$(USERUNITDIR)/agentmeterd.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/agentmeterd.service
	$(BUILD)/agentmeterctl completion bash > $(DESTDIR)$(BASHCOMPDIR)/agentmeterctl
	$(BUILD)/agentmeterctl completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_agentmeterctl
	$(BUILD)/agentmeterctl completion fish > $(DESTDIR)$(FISHCOMPDIR)/agentmeterctl.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/agentmeterctl $(DESTDIR)$(ZSHCOMPDIR)/_agentmeterctl \
	    $(DESTDIR)$(FISHCOMPDIR)/agentmeterctl.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/agentmeterd $(DESTDIR)$(BINDIR)/agentmeterctl \
	      $(DESTDIR)$(MANDIR)/man1/agentmeterctl.1 $(DESTDIR)$(MANDIR)/man8/agentmeterd.8 \
	      $(DESTDIR)$(USERUNITDIR)/agentmeterd.service $(DESTDIR)$(BASHCOMPDIR)/agentmeterctl \
	      $(DESTDIR)$(ZSHCOMPDIR)/_agentmeterctl $(DESTDIR)$(FISHCOMPDIR)/agentmeterctl.fish

# make deb: the Debian package (debian/) as $(BUILD)/agentmeterd_VERSION_ARCH.deb.
# Its build dependencies are installed first (tests/deps.sh deb); the tree is
# copied into $(BUILD)/deb/ and built there with dpkg-buildpackage, so the
# checkout and its parent directory stay untouched. make lint-deb runs
# lintian on it.
DEB_ARCH = $(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
DEB      = $(BUILD)/agentmeterd_$(VERSION)_$(DEB_ARCH).deb
deb: deps-deb
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || \
	    { echo "debian/changelog says $$v, the Makefile $(VERSION)" >&2; exit 1; }
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/agentmeterd-$(VERSION)
	tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | \
	    tar -x -C $(BUILD)/deb/agentmeterd-$(VERSION)
	cd $(BUILD)/deb/agentmeterd-$(VERSION) && dpkg-buildpackage -b -us -uc -j2 >../build.log 2>&1 || \
	    { tail -n 40 ../build.log >&2; exit 1; }
	cp $(BUILD)/deb/agentmeterd_$(VERSION)_$(DEB_ARCH).deb $(DEB)
	@echo "$(DEB)"

lint-deb: deb
	lintian --info --display-info --pedantic --tag-display-limit 0 $(DEB)

clean:
	rm -rf build build-* 
