// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 the sentry developers
/*
 * sentry turret firmware (SPEC §3-§4): pan servo on pin 9, tilt servo on
 * pin 10, driven by Timer1 hardware PWM (Debian's Arduino core ships no Servo
 * library). Protocol, ASCII at 9600 8N1:
 *
 *   X<deg>.   aim pan   (0-180, at most 3 digits, '.' ends it)
 *   Y<deg>.   aim tilt
 *   L         target lost: sweep pan 20..160, 1 degree per 15 ms, from the
 *             current angle, up first; any aim byte stops the sweep
 *   F<deg>.   fire: raise the trigger pin (7) for TRIGGER_PULSE_MS, only
 *             when <deg> is the pan angle the servo holds, set by an X (not
 *             a sweep or boot), the horns can have arrived there (at
 *             SERVO_MS_PER_60_DEGREES) and stood 100 ms, not sweeping, the
 *             last shot at least 1 s ago, and the whole command arrived
 *             within 50 ms. Anything else is refused without a sound.
 *             sentry sends it only with --fire; the original single-servo
 *             host never does.
 *   newline   nothing but a keep-alive (below).
 *
 * Fails safe:
 * - no slam at boot: a servo gets no pulses (it stays limp where it is)
 *   until the first command for its axis (X or L for pan, Y for tilt);
 * - link timeout: LINK_TIMEOUT_MS without any byte from the host (a crash,
 *   kill -9, a pulled cable on the host's side) stops a sweep, holds the
 *   servos where they are and forgets the aim, so nothing fires until a new
 *   X. Any byte restarts the timer; sentry sends a newline when it has
 *   nothing else to say, once it has seen this sketch's READY.
 *
 * Never blocks: one byte at a time through a state machine, the sweep is a
 * millis() timer; between interrupts the CPU sleeps (idle), woken by the
 * next byte or millisecond tick. Anything that is not part of a valid
 * command is ignored and never moves a servo. Prints "READY" once at boot,
 * nothing else.
 *
 * Builds in the Arduino IDE as a normal sketch, and with Debian's packages:
 * make -C firmware (see firmware/Makefile).
 */

#include <avr/sleep.h>

// Mechanical limits of the turret: no command or sweep leaves them.
const uint8_t PAN_MIN = 0;
const uint8_t PAN_MAX = 180;
const uint8_t TILT_MIN = 0;
const uint8_t TILT_MAX = 180;

const uint8_t SCAN_LOW = 20;
const uint8_t SCAN_HIGH = 160;
const unsigned long SCAN_STEP_MS = 15;
const uint8_t BOOT_ANGLE = 90;

// The Servo library's mapping: 0-180 degrees to 544-2400 microseconds.
const uint16_t PULSE_MIN_US = 544;
const uint16_t PULSE_MAX_US = 2400;
// Timer1 at 16 MHz / 8 ticks every 0.5 us; 40000 ticks make the 20 ms period.
const uint16_t TICKS_PER_US = 2;
const uint16_t PERIOD_TICKS = 40000;

const uint8_t PAN_PIN = 9;   // OC1A
const uint8_t TILT_PIN = 10; // OC1B
const uint8_t TRIGGER_PIN = 7; // PD7: clear of Timer1, the UART and the LED

// How long the trigger pin stays high for one shot: 100 ms pulls a
// solenoid; a flywheel blaster's pusher needs its spin-up and a longer push.
// Set it here, or build with make -C firmware TRIGGER_PULSE_MS=250.
#ifndef TRIGGER_PULSE_MS
#define TRIGGER_PULSE_MS 100
#endif
// The servos' speed under load, to know when a horn can have arrived: a
// loaded MG996R turns 60 degrees in about 0.2 s (an SG90 unloaded: 0.1).
#ifndef SERVO_MS_PER_60_DEGREES
#define SERVO_MS_PER_60_DEGREES 200
#endif

// The fire rules (the Swift ServoController holds the same constants).
const unsigned long FIRE_PULSE_MS = TRIGGER_PULSE_MS;
const unsigned long FIRE_MIN_INTERVAL_MS = 1000;
const unsigned long FIRE_SETTLE_MS = 100;
const unsigned long FIRE_WINDOW_MS = 50;
// No byte from the host for this long: stop, hold, never fire (at most 10 s, SPEC §8).
const unsigned long LINK_TIMEOUT_MS = 5000;

enum ParseState : uint8_t { IDLE, NUMBER, DISCARD };

static ParseState state = IDLE;
static char axis = 0;        // 'X', 'Y' or 'F' while a number is read
static uint16_t value = 0;   // the number so far
static uint8_t digits = 0;
static unsigned long commandStart = 0;  // when the 'F' arrived

static uint8_t pan = BOOT_ANGLE;
static uint8_t tilt = BOOT_ANGLE;
static bool scanning = false;
static bool scanningUp = true;
static unsigned long lastScanStep = 0;

static bool aimed = false;            // an X set the pan since boot, the last L or a link timeout
static unsigned long panArrival = 0;  // when each horn can have reached its angle
static unsigned long tiltArrival = 0;
static bool panDriven = false;        // pulses go out (since the first command for the axis)
static bool tiltDriven = false;
static unsigned long lastByte = 0;    // when the host last sent anything
static bool linkAlive = false;        // a byte came within LINK_TIMEOUT_MS
static bool firing = false;           // the trigger pin is high
static bool everFired = false;
static unsigned long lastShot = 0;

static uint8_t clampAngle(uint16_t angle, uint8_t low, uint8_t high) {
  if (angle < low) return low;
  if (angle > high) return high;
  return (uint8_t)angle;
}

static uint16_t pulseTicks(uint8_t angle) {
  uint32_t us = PULSE_MIN_US + (uint32_t)angle * (PULSE_MAX_US - PULSE_MIN_US) / 180;
  return (uint16_t)(us * TICKS_PER_US);
}

// OCR1A/OCR1B are double-buffered in fast PWM: the new width starts with the
// next period, never mid-pulse.
static void setPan(uint8_t angle) {
  pan = clampAngle(angle, PAN_MIN, PAN_MAX);
  OCR1A = pulseTicks(pan);
}

static void setTilt(uint8_t angle) {
  tilt = clampAngle(angle, TILT_MIN, TILT_MAX);
  OCR1B = pulseTicks(tilt);
}

// Starts a servo's pulses: until then its pin stays low and the servo limp.
static void drivePan() {
  if (!panDriven) TCCR1A |= _BV(COM1A1);
  panDriven = true;
}

static void driveTilt() {
  if (!tiltDriven) TCCR1A |= _BV(COM1B1);
  tiltDriven = true;
}

// When a horn told to move `degrees` can have arrived: it heads for the new
// angle from wherever it is on the way to the old one, so it arrives at most
// that long after it would have reached the old one (or after now).
static unsigned long arrivalAfter(unsigned long arrival, uint8_t degrees) {
  unsigned long now = millis();
  unsigned long from = (long)(arrival - now) > 0 ? arrival : now;
  return from + (unsigned long)degrees * SERVO_MS_PER_60_DEGREES / 60;
}

static uint8_t distance(uint8_t a, uint8_t b) { return a > b ? a - b : b - a; }

// An aim from the host: the fire rules count its settling from the horn's arrival.
static void aimPan(uint8_t angle) {
  uint8_t before = pan;
  setPan(angle);
  // A servo that was never driven may stand anywhere: count the whole travel.
  panArrival = arrivalAfter(panArrival, panDriven ? distance(pan, before) : 180);
  drivePan();
  aimed = true;
}

static void aimTilt(uint8_t angle) {
  uint8_t before = tilt;
  setTilt(angle);
  tiltArrival = arrivalAfter(tiltArrival, tiltDriven ? distance(tilt, before) : 180);
  driveTilt();
}

static bool settled(unsigned long now) {
  return (long)(now - panArrival) >= (long)FIRE_SETTLE_MS && (long)(now - tiltArrival) >= (long)FIRE_SETTLE_MS;
}

// F<angle>. arrived whole: fire only at the aim held, settled, not too soon.
static void fireAt(uint16_t angle) {
  unsigned long now = millis();
  if (now - commandStart > FIRE_WINDOW_MS) return;
  if (scanning || !aimed || angle != pan) return;
  if (!settled(now)) return;
  if (everFired && now - lastShot < FIRE_MIN_INTERVAL_MS) return;
  digitalWrite(TRIGGER_PIN, HIGH);
  firing = true;
  everFired = true;
  lastShot = now;
}

// Ends a shot after its constant width.
static void trigger() {
  if (firing && millis() - lastShot >= FIRE_PULSE_MS) {
    digitalWrite(TRIGGER_PIN, LOW);
    firing = false;
  }
}

// The timer runs from boot; each servo's pin joins it with its first command.
static void startServos() {
  digitalWrite(PAN_PIN, LOW);
  digitalWrite(TILT_PIN, LOW);
  pinMode(PAN_PIN, OUTPUT);
  pinMode(TILT_PIN, OUTPUT);
  // Fast PWM, TOP = ICR1 (mode 14), clk/8; OC1A and OC1B disconnected until
  // their first command (then non-inverting). ICR1 is written before the
  // clock starts (simavr needs that order).
  TCCR1B = 0;
  TCCR1A = _BV(WGM11);
  ICR1 = PERIOD_TICKS - 1;
  TCNT1 = 0;
  TCCR1B = _BV(WGM13) | _BV(WGM12) | _BV(CS11);
  setPan(BOOT_ANGLE);
  setTilt(BOOT_ANGLE);
}

// One received byte through the protocol state machine.
static void receive(uint8_t byte) {
  lastByte = millis();
  linkAlive = true;
  switch (byte) {
    case 'X':
    case 'Y':
    case 'F':
      if (byte == 'F') {
        commandStart = millis();
      } else if (scanning) {
        scanning = false;  // any aim byte stops the sweep where it is
      }
      state = NUMBER;
      axis = (char)byte;
      value = 0;
      digits = 0;
      return;
    case 'L':
      state = IDLE;
      scanning = true;
      scanningUp = true;
      aimed = false;
      lastScanStep = millis();
      drivePan();
      return;
    case '.':
      if (state == NUMBER && digits > 0 && value <= 180) {
        if (axis == 'X') aimPan((uint8_t)value);
        else if (axis == 'Y') aimTilt((uint8_t)value);
        else fireAt(value);
      }
      state = IDLE;
      return;
    default:
      if (byte >= '0' && byte <= '9') {
        if (state == NUMBER) {
          if (digits < 3) {
            value = value * 10 + (byte - '0');
            digits++;
          } else {
            state = DISCARD;  // too long: wait for its '.' and drop it
          }
        }
        return;
      }
      state = IDLE;  // garbage ends a command in progress
  }
}

static void sweep() {
  if (!scanning) return;
  unsigned long now = millis();
  uint8_t low = SCAN_LOW > PAN_MIN ? SCAN_LOW : PAN_MIN;
  uint8_t high = SCAN_HIGH < PAN_MAX ? SCAN_HIGH : PAN_MAX;
  while (now - lastScanStep >= SCAN_STEP_MS) {
    lastScanStep += SCAN_STEP_MS;
    if (scanningUp && pan >= high) scanningUp = false;
    if (!scanningUp && pan <= low) scanningUp = true;
    setPan(scanningUp ? pan + 1 : pan - 1);
  }
}

// The host has gone quiet: hold where the servos are and fire at nothing.
static void watchLink() {
  if (!linkAlive || millis() - lastByte < LINK_TIMEOUT_MS) return;
  linkAlive = false;
  scanning = false;
  aimed = false;
}

void setup() {
  digitalWrite(TRIGGER_PIN, LOW);
  pinMode(TRIGGER_PIN, OUTPUT);
  startServos();
  Serial.begin(9600);
  Serial.println(F("READY"));
}

// Sleeps (idle: the timers, the UART and the PWM run on) until the next
// interrupt: a byte from the host, or Timer0's millisecond tick that moves
// millis() for the sweep, the trigger pulse and the link timeout. The loop
// then runs about once a millisecond instead of spinning, and a byte wakes it
// at once. Interrupts stay off from the check to the sleep (the instruction
// after sei runs before any interrupt), so a byte that came after the check
// wakes the sleep it would otherwise have waited through.
static void idleUntilInterrupt() {
  set_sleep_mode(SLEEP_MODE_IDLE);
  cli();
  if (Serial.available() == 0) {
    sleep_enable();
    sei();
    sleep_cpu();
    sleep_disable();
  }
  sei();
}

void loop() {
  while (Serial.available() > 0) receive((uint8_t)Serial.read());
  watchLink();
  sweep();
  trigger();
  idleUntilInterrupt();
}
