# sentry — two commands on a fresh Debian 12 machine:
#   make demo   installs what it needs, builds, runs sentry on a demo clip
#               against the simulated servo and prints the angle track
#   make test   installs what it needs, runs every test
SWIFT ?= swift
DEMO_CLIP := .cache/demo.mkv

.PHONY: setup build release demo test bench fixtures firmware clean

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

# The sketch for the Uno/Nano and the simavr harness that runs it in tests.
firmware: setup
	$(MAKE) -C firmware
	$(MAKE) -C firmware size
	$(MAKE) -C tools/firmware-sim

test: setup firmware
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: release $(DEMO_CLIP)
	.build/release/sentry bench --camera $(DEMO_CLIP) --size 640x480

# Regenerates Tests/Fixtures/opencv-detections.json with OpenCV itself.
fixtures: setup
	python3 tools/opencv_reference.py fixtures

clean:
	rm -rf .build .cache
	$(MAKE) -C firmware clean
	$(MAKE) -C tools/firmware-sim clean
