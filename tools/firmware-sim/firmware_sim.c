/*
 * firmware-sim: runs the sentry sketch's ELF on a simulated ATmega328P
 * (Debian's simavr) and reports the servo angles it commands.
 *
 *   firmware-sim ELF            script on stdin, replies on stdout:
 *       send HEX HEX ...        feed bytes to the UART, one per byte time
 *       wait MS                 run MS milliseconds of simulated time
 *       angles                  print "angles PAN_US TILT_US PAN TILT T_MS PAN_ON TILT_ON":
 *                               the widths last set, and whether each pin
 *                               carries them (1) or the servo gets no pulses (0)
 *       reset                   forget the latency and width extremes so far
 *       reboot                  reset the MCU (as the reset pin does, and an Uno's
 *                               DTR at every port open) and run its boot, 50 ms
 *       stats                   print "stats MAX_LATENCY_US MIN_PULSE_US MAX_PULSE_US":
 *                               the longest time from a '.' byte to the new
 *                               OCR1A/B value, and the extreme widths ever set
 *       pulses                  print "pulses COUNT HIGH [START_MS WIDTH_MS]...":
 *                               the trigger pin's (PD7, pin 7) pulses since
 *                               boot or the last reset, and whether it is high
 *                               now (a pulse still high has width -1)
 *   firmware-sim ELF --pty [--seconds S]
 *       bridges the UART to a new pseudo-terminal, printed as "pty /dev/pts/N"
 *       before the boot (its READY waits in the pty for the host),
 *       runs in step with the wall clock, prints "t_ms pan tilt" on each change
 *       and "t_ms trigger 1|0" when the trigger pin changes.
 *   firmware-sim --bootloader HEX --pty --dump-flash FILE
 *       an Uno with only its bootloader (Optiboot) behind a pty at 115200
 *       baud, for avrdude: the CPU is held in reset while the port is
 *       unopened (a pty has no DTR) and comes out of it 0.3 s before the
 *       program's first byte, in the boot section with the external-reset
 *       flag set (else Optiboot jumps to the empty application); when the
 *       port is closed again the 32 KiB of flash go to FILE and the harness
 *       exits.
 *   firmware-sim --flash-image FILE
 *       runs a raw flash image (as --dump-flash wrote it) from address 0,
 *       scripted on stdin as above; the UART's output goes to stderr.
 *
 * Pulse widths come from the values written to OCR1A/OCR1B (simavr reports
 * them through TIMER_IRQ_OUT_PWM0/1) times the Timer1 tick, 8 / 16 MHz.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_timer.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_irq.h>
#include <simavr/sim_hex.h>
#include <simavr/sim_regbit.h>
#include <poll.h>

#define F_CPU 16000000UL
/* One byte per byte time at 9600 baud. simavr's UART takes 11 bit times to
 * pass a byte to the program (not 10), so bytes fed any faster pile up in its
 * input FIFO and arrive late. */
static unsigned long baud = 9600;
#define CYCLES_PER_BYTE (F_CPU * 11 / baud)
#define FLASH_SIZE 32768
#define BOOT_SECTION 0x7E00
#define TICK_NS 500                    /* Timer1 at clk/8 */

static avr_t *avr;
static avr_irq_t *uart_in;
static unsigned pulse_ticks[2] = {0, 0};
static unsigned pulse_min_ticks = ~0u, pulse_max_ticks = 0;
static int uart_ready = 1;
static avr_cycle_count_t last_dot_cycle;
static unsigned long max_latency_us;
static int pty_fd = -1, pty_slave = -1;

/* The trigger pin's pulses, in cycles. */
#define MAX_PULSES 4096
static avr_cycle_count_t pulse_start[MAX_PULSES], pulse_end[MAX_PULSES];
static int pulse_count;
static int trigger_high;
static volatile sig_atomic_t stop_requested;

static void on_pwm(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    int channel = (int)(intptr_t)param;
    pulse_ticks[channel] = value;
    if (value < pulse_min_ticks) pulse_min_ticks = value;
    if (value > pulse_max_ticks) pulse_max_ticks = value;
    if (last_dot_cycle) {
        unsigned long us = (unsigned long)((avr->cycle - last_dot_cycle) / (F_CPU / 1000000));
        if (us > max_latency_us) max_latency_us = us;
        last_dot_cycle = 0;
    }
}

static void on_trigger(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)param;
    int high = value != 0;
    if (high == trigger_high) return;
    trigger_high = high;
    if (high && pulse_count < MAX_PULSES) {
        pulse_start[pulse_count] = avr->cycle;
        pulse_end[pulse_count] = 0;
        pulse_count++;
    } else if (!high && pulse_count > 0) {
        pulse_end[pulse_count - 1] = avr->cycle;
    }
    if (pty_fd >= 0) {
        printf("%.1f trigger %d\n", (double)avr->cycle * 1000.0 / F_CPU, high);
        fflush(stdout);
    }
}

static void on_uart_out(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq; (void)param;
    uint8_t byte = (uint8_t)value;
    if (pty_fd >= 0) {
        (void)!write(pty_fd, &byte, 1);
    } else {
        fputc(byte == '\n' ? '\n' : byte, stderr);
    }
}

static void on_xon(avr_irq_t *irq, uint32_t value, void *param) { (void)irq; (void)value; (void)param; uart_ready = 1; }
static void on_xoff(avr_irq_t *irq, uint32_t value, void *param) { (void)irq; (void)value; (void)param; uart_ready = 0; }

/* Run flat out: no real-time sleeping when the CPU sleeps. */
static void no_sleep(avr_t *a, avr_cycle_count_t how_long) { (void)a; (void)how_long; }

static void run_until(avr_cycle_count_t cycle) {
    while (avr->cycle < cycle) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "firmware-sim: the simulated CPU stopped (state %d)\n", state);
            exit(3);
        }
    }
}

static void send_byte(uint8_t byte) {
    avr_cycle_count_t deadline = avr->cycle + 100 * CYCLES_PER_BYTE;
    while (!uart_ready && avr->cycle < deadline) run_until(avr->cycle + 1000);
    if (byte == '.') last_dot_cycle = avr->cycle;
    avr_raise_irq(uart_in, byte);
    run_until(avr->cycle + CYCLES_PER_BYTE);
}

static unsigned pulse_us(int channel) { return pulse_ticks[channel] * TICK_NS / 1000; }

/* Whether Timer1 drives OC1A (channel 0) or OC1B (1): COM1A1/COM1B1 in TCCR1A. */
#define TCCR1A_ADDRESS 0x80
static int driven(int channel) { return (avr->data[TCCR1A_ADDRESS] & (channel == 0 ? 0x80 : 0x20)) != 0; }

static int angle_of(unsigned us) {
    /* Inverse of the Servo library's map(): nearest angle for the width. */
    return (int)(((long)us - 544) * 180 + 928) / 1856;
}

static double now_ms(void) { return (double)avr->cycle * 1000.0 / F_CPU; }

static void on_signal(int s) { (void)s; stop_requested = 1; }

static int run_script(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        char *cursor = line;
        if (strncmp(line, "send", 4) == 0) {
            cursor += 4;
            char *end;
            for (;;) {
                unsigned long v = strtoul(cursor, &end, 16);
                if (end == cursor) break;
                send_byte((uint8_t)v);
                cursor = end;
            }
        } else if (strncmp(line, "wait", 4) == 0) {
            double ms = atof(line + 4);
            run_until(avr->cycle + (avr_cycle_count_t)(ms * (F_CPU / 1000)));
        } else if (strncmp(line, "angles", 6) == 0) {
            printf("angles %u %u %d %d %.3f %d %d\n", pulse_us(0), pulse_us(1), angle_of(pulse_us(0)), angle_of(pulse_us(1)), now_ms(),
                   driven(0), driven(1));
        } else if (strncmp(line, "reboot", 6) == 0) {
            avr_reset(avr);
            run_until(avr->cycle + F_CPU / 20);
        } else if (strncmp(line, "reset", 5) == 0) {
            max_latency_us = 0;
            last_dot_cycle = 0;
            pulse_count = 0;
            pulse_min_ticks = pulse_ticks[0] < pulse_ticks[1] ? pulse_ticks[0] : pulse_ticks[1];
            pulse_max_ticks = pulse_ticks[0] > pulse_ticks[1] ? pulse_ticks[0] : pulse_ticks[1];
        } else if (strncmp(line, "pulses", 6) == 0) {
            printf("pulses %d %d", pulse_count, trigger_high);
            for (int i = 0; i < pulse_count; i++) {
                double width = pulse_end[i] ? (double)(pulse_end[i] - pulse_start[i]) * 1000.0 / F_CPU : -1;
                printf(" %.3f %.3f", (double)pulse_start[i] * 1000.0 / F_CPU, width);
            }
            printf("\n");
        } else if (strncmp(line, "stats", 5) == 0) {
            printf("stats %lu %u %u\n", max_latency_us, pulse_min_ticks * TICK_NS / 1000, pulse_max_ticks * TICK_NS / 1000);
        } else if (line[0] != '\n' && line[0] != '#') {
            fprintf(stderr, "firmware-sim: unknown script line: %s", line);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}

static double wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

/* True while no program has the pty's other side open. */
static int pty_unused(int master) {
    struct pollfd p = { .fd = master, .events = POLLIN };
    return poll(&p, 1, 0) > 0 && (p.revents & POLLHUP);
}

/* A reset as the board's DTR line gives: into the boot section, with the
 * external-reset flag that tells Optiboot to stay there. */
static void external_reset(void) {
    avr_reset(avr);
    avr_regbit_set(avr, avr->reset_flags.extrf);
}

/* A new pseudo-terminal in raw mode whose master is the UART's other end:
 * what the sketch prints from now on waits there for the host to read. */
static int open_pty(void) {
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
        perror("firmware-sim: openpty");
        return -1;
    }
    struct termios raw;
    tcgetattr(slave, &raw);
    cfmakeraw(&raw);
    tcsetattr(slave, TCSANOW, &raw);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    pty_fd = master;
    pty_slave = slave;
    printf("pty %s\n", ttyname(slave));
    fflush(stdout);
    return 0;
}

/* avrdude's reset pulse on DTR before it speaks to the bootloader, in ms. */
#define DTR_PULSE_MS 300

static int run_pty(double seconds, const char *dump_path) {
    if (pty_fd < 0 && open_pty() != 0) return 1;
    int master = pty_fd, slave = pty_slave;
    if (dump_path) {
        /* Wait, in reset, for avrdude to open the port. */
        close(slave);
        while (!stop_requested && pty_unused(master)) usleep(1000);
        external_reset();
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    /* A parent may have started us with these blocked (threads often do). */
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
    double start = wall_ms();
    /* For avrdude the board comes out of reset 0.3 s before its first byte, as avrdude's
     * DTR pulse (250 ms low, 50 ms high) resets a board. Optiboot listens for one
     * second of the board's time before it starts the (empty) sketch for good: timed
     * from the port's opening, avrdude run on a busy host took longer than that once. */
    int waiting_for_host = dump_path != NULL;
    unsigned shown[2] = {0, 0};
    uint8_t pending[4096];
    size_t pending_count = 0, pending_next = 0;
    while (!stop_requested && (seconds <= 0 || (wall_ms() - start) < seconds * 1000)) {
        if (dump_path && pending_next == pending_count && pty_unused(master)) {
            FILE *dump = fopen(dump_path, "wb");
            if (!dump || fwrite(avr->flash, 1, FLASH_SIZE, dump) != FLASH_SIZE) {
                perror("firmware-sim: --dump-flash");
                return 1;
            }
            fclose(dump);
            printf("flash dumped to %s\n", dump_path);
            return 0;
        }
        if (pending_next == pending_count) {
            ssize_t n = read(master, pending, sizeof pending);
            pending_count = n > 0 ? (size_t)n : 0;
            pending_next = 0;
        }
        if (waiting_for_host) {
            if (pending_count == 0) {
                usleep(500);
                continue;
            }
            waiting_for_host = 0;
            run_until(avr->cycle + F_CPU / 1000 * DTR_PULSE_MS);
            start = wall_ms() - DTR_PULSE_MS;
        }
        /* Keep simulated time in step with the wall clock. */
        double target = wall_ms() - start;
        if (pending_next < pending_count && now_ms() <= target) {
            send_byte(pending[pending_next++]);
        } else if (now_ms() < target) {
            run_until(avr->cycle + F_CPU / 1000);
        } else {
            usleep(500);
        }
        if (pulse_ticks[0] != shown[0] || pulse_ticks[1] != shown[1]) {
            shown[0] = pulse_ticks[0];
            shown[1] = pulse_ticks[1];
            printf("%.1f %d %d\n", now_ms(), angle_of(pulse_us(0)), angle_of(pulse_us(1)));
            fflush(stdout);
        }
    }
    return 0;
}

/* Loads an Intel hex file into flash (chunks past the 32 KiB are dropped). */
static int load_hex(const char *path) {
    ihex_chunk_p chunks = NULL;
    int count = read_ihex_chunks(path, &chunks);
    if (count <= 0) return -1;
    for (int i = 0; i < count; i++) {
        if (chunks[i].baseaddr >= FLASH_SIZE) continue;
        uint32_t size = chunks[i].size;
        if (chunks[i].baseaddr + size > FLASH_SIZE) size = FLASH_SIZE - chunks[i].baseaddr;
        memcpy(avr->flash + chunks[i].baseaddr, chunks[i].data, size);
    }
    free_ihex_chunks(chunks);
    return 0;
}

/* Loads a raw flash image. */
static int load_image(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return -1;
    size_t n = fread(avr->flash, 1, FLASH_SIZE, file);
    fclose(file);
    return n > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: firmware-sim ELF [--pty [--seconds S]] | --bootloader HEX --pty --dump-flash FILE | --flash-image FILE\n");
        return 2;
    }
    avr = avr_make_mcu_by_name("atmega328p");
    if (!avr) {
        fprintf(stderr, "firmware-sim: simavr has no atmega328p\n");
        return 1;
    }
    const char *dump_path = NULL;
    if (strcmp(argv[1], "--bootloader") == 0 || strcmp(argv[1], "--flash-image") == 0) {
        int bootloader = strcmp(argv[1], "--bootloader") == 0;
        if (argc < 3) {
            fprintf(stderr, "firmware-sim: %s needs a file\n", argv[1]);
            return 2;
        }
        avr_init(avr);
        avr->frequency = F_CPU;
        if ((bootloader ? load_hex(argv[2]) : load_image(argv[2])) != 0) {
            fprintf(stderr, "firmware-sim: cannot read %s\n", argv[2]);
            return 1;
        }
        if (bootloader) {
            avr->reset_pc = BOOT_SECTION;
            avr->pc = BOOT_SECTION;
            baud = 115200;
            for (int i = 3; i + 1 < argc; i++) if (strcmp(argv[i], "--dump-flash") == 0) dump_path = argv[i + 1];
            if (!dump_path) {
                fprintf(stderr, "firmware-sim: --bootloader needs --pty --dump-flash FILE\n");
                return 2;
            }
        }
        argv += 1;  /* so that argv[2] is --pty below, as for an ELF */
        argc -= 1;
    } else {
        elf_firmware_t firmware;
        memset(&firmware, 0, sizeof firmware);
        if (elf_read_firmware(argv[1], &firmware) != 0) {
            fprintf(stderr, "firmware-sim: cannot read %s; build it with make -C firmware\n", argv[1]);
            return 1;
        }
        firmware.frequency = F_CPU;
        avr_init(avr);
        avr_load_firmware(avr, &firmware);
    }
    avr->sleep = no_sleep;
    avr->log = 0;

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(AVR_UART_FLAG_POLL_SLEEP | AVR_UART_FLAG_STDIO);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_xoff, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_TIMER_GETIRQ('1'), TIMER_IRQ_OUT_PWM0), on_pwm, (void *)0);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_TIMER_GETIRQ('1'), TIMER_IRQ_OUT_PWM1), on_pwm, (void *)1);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('D'), 7), on_trigger, NULL);

    if (dump_path) return run_pty(0, dump_path);

    /* With --pty the port exists before the boot, so the sketch's READY waits
     * in it for the host, as a board's does on a port left open. */
    int on_pty = argc >= 3 && strcmp(argv[2], "--pty") == 0;
    if (on_pty && open_pty() != 0) return 1;
    /* Boot: let setup() run before anything is sent. */
    run_until(F_CPU / 20);
    last_dot_cycle = 0;
    pulse_min_ticks = pulse_ticks[0] < pulse_ticks[1] ? pulse_ticks[0] : pulse_ticks[1];
    pulse_max_ticks = pulse_ticks[0] > pulse_ticks[1] ? pulse_ticks[0] : pulse_ticks[1];

    if (on_pty) {
        double seconds = (argc >= 5 && strcmp(argv[3], "--seconds") == 0) ? atof(argv[4]) : 0;
        return run_pty(seconds, NULL);
    }
    return run_script();
}
