# sentry — two commands on a fresh Debian 12 machine:
#   make demo   installs what it needs, builds, runs sentry on a demo clip
#               against the simulated servo and prints the angle track
#   make test   installs what it needs, runs every test
SWIFT ?= swift
SHELL := /bin/bash
DEMO_CLIP := .cache/demo.mkv

.PHONY: setup build release demo demo-turret test test-vm bench fixtures firmware fuzz fuzz-run soak clean

setup:
	@tools/setup

build: setup
	$(SWIFT) build

release: setup
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
	$(MAKE) -C tools/firmware-sim

test: setup firmware
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) fuzz-run FUZZ_SECONDS=30
	$(MAKE) test-vm

# sentry on a real V4L2 driver (vivid) in a qemu VM: formats, sizes, rate,
# devices, and a face shown through the driver's loopback.
test-vm: release
	tools/vm-test .build/release/sentry

# libFuzzer on the cascade XML loader, the TFLite model reader/interpreter and
# the serial protocol, seeded from
# Fuzz/corpus (new finds go to .cache/fuzz). A crash leaves crash-* here:
# copy it into Fuzz/corpus/<target>/, where the replay test keeps it fixed.
FUZZ_SECONDS ?= 600
FUZZ_BUILD = $(SWIFT) build -c release --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
fuzz-run:
	$(FUZZ_BUILD) --product fuzz-cascade
	$(FUZZ_BUILD) --product fuzz-protocol
	$(FUZZ_BUILD) --product fuzz-model
	for target in cascade protocol model; do \
		mkdir -p .cache/fuzz/$$target && \
		.build-fuzz/release/fuzz-$$target .cache/fuzz/$$target Fuzz/corpus/$$target \
			-max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 2>&1 | grep -E "^(stat::number_of_executed_units|Done|==[0-9]+==ERROR|SUMMARY)" ; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

# 10 minutes on the looped demo clip with random unplugs (not in make test).
soak: release $(DEMO_CLIP)
	python3 tools/soak.py --sentry .build/release/sentry --clip $(DEMO_CLIP) --minutes $(or $(SOAK_MINUTES),10)

fuzz: setup
	$(MAKE) fuzz-run FUZZ_SECONDS=600

bench: release $(DEMO_CLIP)
	tools/bench-detector $(DEMO_CLIP)

# Regenerates Tests/Fixtures/opencv-detections.json with OpenCV itself.
fixtures: setup
	python3 tools/opencv_reference.py fixtures

clean:
	rm -rf .build .cache
	$(MAKE) -C firmware clean
	$(MAKE) -C tools/firmware-sim clean
