# sentry — two commands on a fresh Debian 12 machine (with Swift 6.1 or newer):
#   make demo   installs what the demo needs, builds, runs sentry on a demo
#               clip against the simulated servo and prints the angle track
#   make test   installs what the tests need, runs every test (tools/test-stages:
#               each stage timed, side by side where they can be)
#   make check  the Swift tests alone, for the edit-test loop
SWIFT ?= swift
SHELL := /bin/bash
DEMO_CLIP := .cache/demo.mkv
# make install's static release binary, which the tests run as a user does. Set
# here, before any rule names it: make reads a rule's prerequisites as it meets
# the rule (check named an empty one, and ran its tests on a stale binary).
INSTALL_BUILD := .build-install/release/sentry
# The project's own Python (tools/setup makes it): the tests' and tools' python3.
export PATH := $(CURDIR)/.venv/bin:$(PATH)

.PHONY: aarch64 test-aarch64 setup setup-demo setup-firmware build release demo demo-turret test check fuzz-build test-vm test-install test-setup install uninstall man completions deb test-deb flash bench console-bench fixtures firmware fuzz fuzz-run soak memory-soak clean

# SENTRY_SETUP_DONE=1 (make test sets it once tools/setup has run): not again.
setup:
	@[ -n "$(SENTRY_SETUP_DONE)" ] || tools/setup

setup-demo:
	@[ -n "$(SENTRY_SETUP_DONE)" ] || tools/setup demo

# Only the AVR toolchain and avrdude: make flash works on a Pi with the .deb and no Swift.
setup-firmware:
	@[ -n "$(SENTRY_SETUP_DONE)" ] || tools/setup firmware

build: setup-demo
	$(SWIFT) build

release: setup-demo
	$(SWIFT) build -c release

$(DEMO_CLIP): tools/make-demo-clip Tests/Fixtures/photos/astronaut.png
	tools/make-demo-clip $@

demo: release $(DEMO_CLIP)
	.build/release/sentry --camera $(DEMO_CLIP) --serial sim --track --quiet

# The closed loop (--mount turret) in the virtual camera: a camera on the
# simulated turret looking at a wide scene with a face at 107.5°.
demo-turret: release
	tools/make-scene .cache/scene.png
	.build/release/sentry --camera sim:.cache/scene.png --serial sim --mount turret --frames 90 --track --quiet

# The sketch for the Uno/Nano and the simavr harness that runs it in tests.
firmware: setup
	$(MAKE) -C firmware
	$(MAKE) -C firmware size
	$(MAKE) -C firmware test-builds
	$(MAKE) -C tools/firmware-sim

# Every stage of make test, timed, with the total on the last line; what can run
# side by side does (tools/test-stages says which and why).
test:
	tools/test-stages

# The Swift tests alone (after setup, the firmware they run in simavr and the
# release binary they run as a user does), two processes side by side (tools/swift-tests).
check: setup firmware $(INSTALL_BUILD)
	$(SWIFT) build --build-tests
	tools/swift-tests

# make install [PREFIX=/usr/local] [DESTDIR=]: the binary, its man pages and
# completions, the BlazeFace and face mesh models, the firmware (hex and sketch),
# the docs, the systemd units (sentry,
# sentry-relay), the udev
# rule, the service user (systemd-sysusers) and an example settings file
# (kept if one is there). Without DESTDIR it also creates the user and
# reloads udev and systemd.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/sentry
DOCDIR = $(PREFIX)/share/doc/sentry
MANDIR = $(PREFIX)/share/man
UNITDIR ?= $(SYSCONFDIR)/systemd/system
UDEVDIR ?= $(SYSCONFDIR)/udev/rules.d
SYSUSERSDIR ?= $(SYSCONFDIR)/sysusers.d
MODELS = face_detection_full_range.tflite face_detection_short_range.tflite face_landmark.tflite iris_landmark.tflite \
	dlib_face_recognition_resnet_model_v1.dat
# What a user reads, laid out as in the checkout so that every link in them works
# (tools/install-test follows each one): the README, the guides and the pages they
# link, with their pictures.
USER_DOCS = README.md LICENSE CONTRIBUTING.md $(wildcard docs/*.md) $(wildcard docs/guide/*.md) $(wildcard docs/*.png) $(wildcard docs/images/*.svg)
# The installed binary carries the Swift runtime (static stdlib): the board
# it runs on needs no Swift toolchain. It links FoundationEssentials only: full
# Foundation would bring ICU's 34 MB of data (and tripled the binary). TOMLKit
# names Foundation for its Date, which asks the linker for it; these flags drop
# that request, so a call into Foundation proper anywhere fails the link here
# instead of growing the binary.
WITHOUT_FOUNDATION = $(foreach library,Foundation FoundationInternationalization CoreFoundation _FoundationICU,\
	-Xswiftc -Xfrontend -Xswiftc -disable-autolink-library -Xswiftc -Xfrontend -Xswiftc $(library))
$(INSTALL_BUILD): setup
	$(SWIFT) build -c release --static-swift-stdlib --scratch-path .build-install --product sentry $(WITHOUT_FOUNDATION)
# Man pages: sentry(1) and one per subcommand (sentry-run(1)…), from the commands'
# own definitions (swift-argument-parser's generate-manual), dated by the commit.
# Made once per build of the binary (a file target: make test's stages share it).
# The plugin builds every product first, in release unless told: debug is the
# build the tests already have (the help it reads is the same), where release
# was a second release build of everything (200 s in a fresh make test).
MAN_PAGES = .build/man
man: $(MAN_PAGES)/sentry.1
$(MAN_PAGES)/sentry.1: $(INSTALL_BUILD)
	$(SWIFT) package generate-manual --configuration debug --multi-page --date "$$(git log -1 --format=%cs 2>/dev/null || date +%F)" >/dev/null
	rm -rf $(MAN_PAGES) && mkdir -p $(MAN_PAGES)
	for page in .build/plugins/GenerateManual/outputs/sentry/*.1; do \
		name=$$(basename $$page .1 | tr . -); [ $$name = sentry-help ] && continue; \
		command=$$(echo $$name | tr - ' '); \
		sed -e 's/^\.Dt SENTRY\./.Dt SENTRY-/' -e '/^\.Xr sentry\.help /d' -e 's/^\.Xr sentry\./.Xr sentry-/' \
			-e "s/^\.Nm \"$$command\"$$/.Nm $$name/" -e "s/^\.Nm$$/.Nm \"$$command\"/" $$page > $(MAN_PAGES)/$$name.1 || exit 1; \
	done

# Tab completion for bash, zsh and fish, from the binary itself.
COMPLETIONS = .build/completions
completions: $(COMPLETIONS)/sentry.fish
$(COMPLETIONS)/sentry.fish: $(INSTALL_BUILD)
	mkdir -p $(COMPLETIONS)
	$(INSTALL_BUILD) --generate-completion-script bash | sed '1{/^#!/d}' > $(COMPLETIONS)/sentry
	$(INSTALL_BUILD) --generate-completion-script zsh > $(COMPLETIONS)/_sentry
	$(INSTALL_BUILD) --generate-completion-script fish > $(COMPLETIONS)/sentry.fish

install: $(INSTALL_BUILD) firmware man completions
	install -D -s -m 755 $(INSTALL_BUILD) $(DESTDIR)$(BINDIR)/sentry
	for page in $(MAN_PAGES)/*.1; do install -D -m 644 $$page $(DESTDIR)$(MANDIR)/man1/$$(basename $$page) || exit 1; done
	install -D -m 644 $(COMPLETIONS)/sentry $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sentry
	install -D -m 644 $(COMPLETIONS)/_sentry $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_sentry
	install -D -m 644 $(COMPLETIONS)/sentry.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sentry.fish
	for model in $(MODELS); do install -D -m 644 .cache/models/$$model $(DESTDIR)$(DATADIR)/models/$$model || exit 1; done
	install -D -m 644 firmware/sentry/build-uno/sentry.hex $(DESTDIR)$(DATADIR)/firmware/sentry.hex
	install -D -m 644 firmware/sentry/sentry.ino $(DESTDIR)$(DATADIR)/firmware/sentry/sentry.ino
	install -D -m 755 tools/examples/doorbell $(DESTDIR)$(DATADIR)/examples/doorbell
	for doc in $(USER_DOCS); do install -D -m 644 $$doc $(DESTDIR)$(DOCDIR)/$$doc || exit 1; done
	for unit in sentry sentry-relay; do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' tools/install/$$unit.service.in \
			| install -D -m 644 /dev/stdin $(DESTDIR)$(UNITDIR)/$$unit.service || exit 1; done
	install -D -m 644 tools/install/60-sentry-turret.rules $(DESTDIR)$(UDEVDIR)/60-sentry-turret.rules
	install -D -m 644 tools/install/sentry.sysusers $(DESTDIR)$(SYSUSERSDIR)/sentry.conf
	test -e $(DESTDIR)$(SYSCONFDIR)/sentry/sentry.toml || install -D -m 644 tools/install/sentry.toml $(DESTDIR)$(SYSCONFDIR)/sentry/sentry.toml
	if [ -z "$(DESTDIR)" ]; then \
		systemd-sysusers $(SYSUSERSDIR)/sentry.conf; \
		udevadm control --reload 2>/dev/null || true; \
		systemctl daemon-reload 2>/dev/null || true; \
		echo "installed; start it with: systemctl enable --now sentry (settings: $(SYSCONFDIR)/sentry/sentry.toml)"; \
	fi

# dist/sentry_<version>_<arch>.deb (tools/make-deb), checked by lintian.
# ARCH=arm64: the package for a Raspberry Pi, with make aarch64's binary and
# Depends from the arm64 root's libraries.
ARCH ?= $(shell dpkg --print-architecture)
deb: firmware $(if $(filter-out $(shell dpkg --print-architecture),$(ARCH)),aarch64)
	ARCH=$(ARCH) tools/make-deb
	# lintian leaves an mldbm-elf-* cache file in TMPDIR: give it one of its own.
	scratch=$$(mktemp -d /tmp/sentry-lintian.XXXXXX); TMPDIR=$$scratch lintian --fail-on error dist/sentry_$$(head -1 VERSION)_$(ARCH).deb; \
	status=$$?; rm -rf "$$scratch"; exit $$status

# tools/setup as a new user meets it in a clean Debian 12 root (tools/setup-test).
test-setup:
	tools/setup-test

# The package installed and purged with apt in a clean Debian 12 root (tools/deb-test).
test-deb: deb
	ARCH=$(ARCH) tools/deb-test

# Removes what install put there; the settings file only if unchanged, the
# service user never (files it owns may remain).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/sentry $(addprefix $(DESTDIR)$(DATADIR)/models/,$(MODELS))
	rm -f $(DESTDIR)$(DATADIR)/firmware/sentry.hex $(DESTDIR)$(DATADIR)/firmware/sentry/sentry.ino $(DESTDIR)$(DATADIR)/examples/doorbell
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(USER_DOCS))
	rm -f $(DESTDIR)$(MANDIR)/man1/sentry.1 $(DESTDIR)$(MANDIR)/man1/sentry-*.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sentry $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_sentry \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/sentry.fish
	rm -f $(DESTDIR)$(UNITDIR)/sentry.service $(DESTDIR)$(UNITDIR)/sentry-relay.service $(DESTDIR)$(UDEVDIR)/60-sentry-turret.rules $(DESTDIR)$(SYSUSERSDIR)/sentry.conf
	cmp -s tools/install/sentry.toml $(DESTDIR)$(SYSCONFDIR)/sentry/sentry.toml && rm -f $(DESTDIR)$(SYSCONFDIR)/sentry/sentry.toml || true
	for dir in $(DATADIR)/models $(DATADIR)/examples $(DATADIR)/firmware/sentry $(DATADIR)/firmware $(DATADIR) $(DOCDIR)/docs/guide $(DOCDIR)/docs/images $(DOCDIR)/docs $(DOCDIR) $(SYSCONFDIR)/sentry \
		$(MANDIR)/man1 $(MANDIR) $(PREFIX)/share/bash-completion/completions $(PREFIX)/share/bash-completion \
		$(PREFIX)/share/zsh/vendor-completions $(PREFIX)/share/zsh $(PREFIX)/share/fish/vendor_completions.d $(PREFIX)/share/fish; do \
		rmdir $(DESTDIR)$$dir 2>/dev/null || true; done

# make flash [PORT=/dev/ttyACM0] [BOOTLOADER=old]: the sketch onto the board.
flash: setup-firmware
	$(MAKE) -C firmware flash $(if $(PORT),PORT=$(PORT)) $(if $(BOOTLOADER),BOOTLOADER=$(BOOTLOADER))

# Installs into a scratch DESTDIR, checks the units and the footprint, uninstalls.
test-install:
	tools/install-test

# sentry on a real V4L2 driver (vivid) in a qemu VM: formats, sizes, rate,
# devices, and a face shown through the driver's loopback.
# make aarch64: sentry for a Raspberry Pi's 64-bit OS, cross-built with Debian
# unstable's swiftlang in two Debian roots that tools/aarch64-roots makes from
# Debian's packages (once per machine, in .cache/aarch64): dist/aarch64/sentry,
# the Swift runtime inside as in make install's binary. tools/aarch64-run runs
# it under qemu-user (docs/aarch64.md).
AARCH64_BUILD = .build-aarch64/aarch64-unknown-linux-gnu/release/sentry
aarch64:
	tools/aarch64-build release --product sentry --static-swift-stdlib $(WITHOUT_FOUNDATION)
	mkdir -p dist/aarch64
	tools/aarch64-build strip $(AARCH64_BUILD) dist/aarch64/sentry

# The aarch64 build under qemu-user: its unit tests and its commands against the x86 build's.
test-aarch64: release aarch64
	tools/aarch64-test

# The same static release build as make install's and the package's.
test-vm: $(INSTALL_BUILD)
	tools/vm-test $(INSTALL_BUILD)

# libFuzzer on the cascade XML loader, the TFLite model reader/interpreter,
# the serial protocol, WebSocket frames, a broker's MQTT packets and a client's
# HTTP request heads, seeded from
# Fuzz/corpus (new finds go to .cache/fuzz). A crash leaves crash-* here:
# copy it into Fuzz/corpus/<target>/, where the replay test keeps it fixed.
FUZZ_SECONDS ?= 600
# Fuzzers at once (FUZZ_JOBS=1 on a one-core machine).
FUZZ_JOBS ?= 2
FUZZ_TARGETS = cascade protocol model frames mqtt http
# Every fuzzer in one build (Package.swift keeps only them and what they import).
fuzz-build:
	SENTRY_FUZZING=1 $(SWIFT) build -c release --scratch-path .build-fuzz
fuzz-run: fuzz-build
	printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I{} tools/fuzz-one {} $(FUZZ_SECONDS)

# 10 minutes on the looped demo clip with random unplugs (not in make test).
soak: release $(DEMO_CLIP)
	python3 tools/soak.py --sentry .build/release/sentry --clip $(DEMO_CLIP) --minutes $(or $(SOAK_MINUTES),10)

# Every mode a user leaves running, at once, in real time: memory, descriptors and threads drawn.
memory-soak: release $(DEMO_CLIP)
	tools/memory-soak --sentry .build/release/sentry --clip $(DEMO_CLIP) --minutes $(or $(SOAK_MINUTES),60) \
		--svg docs/images/memory-soak.svg sim pty web-expressions expressions relay

fuzz: setup
	$(MAKE) fuzz-run FUZZ_SECONDS=600

bench: release $(DEMO_CLIP)
	tools/bench-detector $(DEMO_CLIP)

# The web console's cost: CPU with and without --web and a viewer, encode time, latency.
console-bench: release
	tools/console-bench .build/release/sentry

# Regenerates Tests/Fixtures/opencv-detections.json with OpenCV itself.
fixtures: setup
	python3 tools/opencv_reference.py fixtures

clean:
	rm -rf .build .cache
	$(MAKE) -C firmware clean
	$(MAKE) -C tools/firmware-sim clean
