# ruff: noqa: E501, W291
"""Build the agent-view judge7 scenario: memories.jsonl, project.json and steps.json.

One made-up project, `kelpie` (Zephyr RTOS firmware in C for a LoRaWAN harbour water-level gauge on an
STM32WLE5, with ztest/twister unit tests and a JavaScript TTN payload decoder), with 55 memories of the kind a
team records (decisions, rejected alternatives, conventions, gotchas, facts, preferences, todos, one older and
newer pair of the same setting), the project's source files, and five scripted coding sessions (18 user
messages) whose steps are each labelled with the memories that matter for that step. Written blind for
codememory (the writer read only benchmarks/data/agent_view/build.py); see README.md.

    python benchmarks/data/agent_view_judge7/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge7/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (prefix `kp_`); the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Tool-call arguments
may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays every
scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (OpenCode and Claude Code refuse to edit a file
their process has not read, and each turn is a new process).

The labelling rules below are agent_view's, kept word for word (their examples name agent_view's project).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: ST_MakeEnvelope with 4326,
UPLOAD_MAX_BYTES, deploy/nginx.conf, leeway=60, utf-8-sig), reads or edits the file the memory points to for
this task, or does what the memory prescribes where neither the user's request nor the file being edited
would have told it to. A memory the call merely agrees with (a pattern the file already follows, a warning
heeded by not doing something) is relevant, not used. Final answers have no `uses`: use detection watches what
the agent does (tool calls and edits) and the ids it cites. These labels score use detection
(bench_agent_view.py: which shown memories the session went on to use).
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note")
AGENTS = ("claude", "opencode", "codex", "dev", "claude", "opencode")
FIRST, LAST = datetime(2025, 3, 3, 9, 0, tzinfo=UTC), datetime(2026, 10, 28, 16, 0, tzinfo=UTC)


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- older memories first (created_at follows the list order)
    (
        "kp_interval_old",
        "fact",
        0.5,
        "lorawan,config,uplink",
        "Uplink interval: CONFIG_KELPIE_UPLINK_INTERVAL_S=900 (15 min) in app/prj.conf; downlink 0x01 changes it per gauge.",
    ),
    (
        "kp_otaa_only",
        "rejected_alternative",
        0.5,
        "lorawan,join",
        "ABP was rejected: the frame counters restart at 0 after every reboot and the network server drops the uplinks as replays. OTAA only; keys are provisioned over the service port with the `kelpie keys` shell command.",
    ),
    (
        "kp_unity_rejected",
        "rejected_alternative",
        0.4,
        "tests,ztest",
        "Rejected Unity/Ceedling for the unit tests: a second framework with its own mocks, when ztest on native_sim already runs in CI through twister.",
    ),
    (
        "kp_mm_units",
        "convention",
        0.7,
        "sensor,units,payload",
        "Levels and distances are int32_t millimetres everywhere (firmware, payload, NVS), and temperatures inside the firmware are int32_t hundredths of a degree (t_centi). Floats only inside app/src/sensor/, never in a payload or in NVS.",
    ),
    (
        "kp_median9",
        "decision",
        0.5,
        "sensor,filter",
        "A measurement is the median of 9 pings (measure.c). The mean was rejected: one echo off a gull or a wave crest moves it by metres.",
    ),
    (
        "kp_ping_gap",
        "gotcha",
        0.5,
        "sensor,ultrasonic",
        "Pings closer than 50 ms apart catch the ringing of the previous ping on the JSN-SR04T and read about 200 mm; PING_GAP_MS is 60.",
    ),
    (
        "kp_temp_comp",
        "convention",
        0.8,
        "sensor,ultrasonic,temperature",
        "Speed of sound must follow the air temperature from the SHT40: c = 331.3 + 0.606*T m/s. In fixed point: c_mm_s = 331300 + 606 * t_centi / 100. Uncompensated, the level is off by about 17 mm per metre of range for every 10 degrees away from 20 C.",
    ),
    (
        "kp_echo_overflow",
        "gotcha",
        0.7,
        "sensor,ultrasonic,overflow",
        "echo_us * c_mm_s overflows int32 for echoes longer than about 6.2 ms (a bit over 1 m of range); the Bergen gauge reported a level of -2147 m once. Compute distance_mm = (int64_t)echo_us * c_mm_s / 2000000 in 64-bit.",
    ),
    (
        "kp_sht40_wait",
        "gotcha",
        0.5,
        "sensor,sht40,i2c",
        "The SHT40 high-precision measurement (command 0xFD) takes 8.3 ms; reading sooner is NACKed and i2c_read returns -EIO. sht40.c waits k_msleep(10).",
    ),
    (
        "kp_float_log",
        "gotcha",
        0.7,
        "logging,zephyr,printf",
        "CONFIG_CBPRINTF_FP_SUPPORT is off (about 2.5 KB of flash), so a %f in LOG_INF prints a literal '%f'. Log integers: millimetres, and temperatures as %d.%02d from t_centi.",
    ),
    (
        "kp_log_module",
        "convention",
        0.4,
        "logging,zephyr",
        "Every source file registers LOG_MODULE_REGISTER(<name>, CONFIG_KELPIE_LOG_LEVEL) and logs with LOG_INF/LOG_WRN/LOG_ERR; no printk outside main.c's boot banner.",
    ),
    (
        "kp_no_busy_wait",
        "convention",
        0.6,
        "power,zephyr",
        "No k_busy_wait longer than 100 us and no polling loops: wait with k_sleep/k_msleep/k_sem_take so the SoC can drop to STOP2. The average current budget is 35 uA.",
    ),
    (
        "kp_console_current",
        "gotcha",
        0.5,
        "power,uart,build",
        "The console UART keeps the SoC out of STOP2 (about 1.1 mA instead of 30 uA): measure sleep current only on the field build, whose prj_field.conf sets CONFIG_SERIAL=n.",
    ),
    (
        "kp_battery_divider",
        "gotcha",
        0.5,
        "battery,adc,power",
        "The battery divider is switched by PA9: drive it high, wait 1 ms, sample ADC IN3, drive it low again. Left on it draws 100 uA, three times the whole sleep budget.",
    ),
    # --- LoRaWAN and payload
    (
        "kp_payload_le",
        "convention",
        0.7,
        "payload,lorawan,byteorder",
        "Uplinks are packed by hand into a uint8_t buffer with sys_put_le16/sys_put_le32 (zephyr/sys/byteorder.h); never memcpy a struct into the payload (padding and byte order).",
    ),
    (
        "kp_payload_version",
        "convention",
        0.8,
        "payload,lorawan,decoder",
        "Byte 0 of the measurement uplink is its layout version (PAYLOAD_VERSION in app/src/payload.h). Any change to the layout bumps it, and the decoder keeps decoding every older version: gauges on old firmware stay in the field for years.",
    ),
    (
        "kp_decoder_sync",
        "convention",
        0.8,
        "payload,ttn,decoder,tests",
        "tools/decoder.js is the TTN uplink payload formatter the harbour dashboards rely on. A change to an uplink layout in app/src/payload.c needs the matching change in decodeMeasurement and a case in tools/decoder.test.js (`node --test tools/`), in the same commit.",
    ),
    (
        "kp_dr0_51",
        "gotcha",
        0.7,
        "payload,lorawan,eu868",
        "EU868 at DR0 (SF12) allows 51 bytes of application payload, and far gauges fall back to DR0 through ADR; a longer payload makes lorawan_send() fail with -EMSGSIZE. Keep every uplink at 51 bytes or less.",
    ),
    (
        "kp_fports",
        "fact",
        0.4,
        "lorawan,ports",
        "FPorts: 2 measurement uplink, 3 daily status uplink, 4 high-water alarm, 10 config downlinks.",
    ),
    (
        "kp_no_timestamp",
        "rejected_alternative",
        0.4,
        "payload,time",
        "Rejected a timestamp in the measurement payload (DeviceTimeReq plus the RTC): 4 more bytes at DR0 and drift to handle; the backend uses the network server's received_at.",
    ),
    (
        "kp_fair_use",
        "gotcha",
        0.8,
        "lorawan,ttn,uplink,airtime",
        "TTN fair use allows 30 s of uplink airtime per device per day. 144 uplinks a day (every 10 min) only fit up to SF9, so the uplink interval never goes below 600 s: the Kconfig range and downlink 0x01 (10..1440 minutes) enforce it.",
    ),
    (
        "kp_join_backoff",
        "decision",
        0.6,
        "lorawan,join",
        "Join retries back off exponentially from 30 s to 1 h with +-20% jitter (lora.c): after a harbour power cut, 14 gauges rejoining in lockstep saturated the gateway.",
    ),
    (
        "kp_adr",
        "decision",
        0.4,
        "lorawan,adr",
        "ADR stays on (lorawan_enable_adr(true)): the link margin of harbour gauges swings with the tide, and a fixed data rate lost 30% of uplinks at high water in 2025.",
    ),
    (
        "kp_devnonce",
        "gotcha",
        0.6,
        "lorawan,nvs,flash",
        "The DevNonce lives in NVS (id 3) and must grow across reboots (LoRaWAN 1.0.4). `west flash --erase` wipes it, and TTN then refuses every join with 'DevNonce is too small' until the nonces are reset in the console.",
    ),
    (
        "kp_eu868",
        "fact",
        0.3,
        "lorawan,region",
        "Region EU868 only (CONFIG_LORAMAC_REGION_EU868=y); no other region is planned.",
    ),
    (
        "kp_status_uplink",
        "fact",
        0.4,
        "lorawan,status",
        "The daily status uplink (FPort 3) carries battery mV, the firmware version from app/VERSION, the reset cause and the count of rejected downlinks.",
    ),
    # --- watchdog, boot, settings
    (
        "kp_watchdog",
        "gotcha",
        0.8,
        "watchdog,reliability,lorawan",
        "The IWDG fires after 8 s (watchdog_start in main.c). Any longer wait must go through kelpie_sleep_s() from main.c, which sleeps in 5 s chunks and feeds the watchdog; a bare k_sleep longer than 8 s ends in a watchdog reset.",
    ),
    (
        "kp_reset_cause",
        "gotcha",
        0.5,
        "hwinfo,status,boot",
        "The reset flags are sticky: read them once at boot with hwinfo_get_reset_cause() and then call hwinfo_clear_reset_cause(), or every later reset reports the old cause (one watchdog reset makes every boot look like a watchdog reset).",
    ),
    (
        "kp_nvs_ids",
        "convention",
        0.7,
        "nvs,settings",
        "NVS ids are defined in app/src/settings_ids.h. Never renumber or reuse one, including the retired 6 (the float offset of layout 1): gauges in the field still have it stored. A new setting takes the number after the highest one and gets its default in settings.c (static initialiser, loaded in load_all()).",
    ),
    (
        "kp_downlink_fmt",
        "convention",
        0.6,
        "downlink,lorawan",
        "Config downlinks (FPort 10) are [cmd][args little-endian]; downlink.c checks the exact length and the range, stores through settings_set_u32 and counts anything unknown or invalid with reject() instead of acting on it.",
    ),
    (
        "kp_alarm",
        "decision",
        0.6,
        "alarm,lorawan,storm",
        "High-water alarm: when the level rises past the gauge's alarm level, one extra uplink goes out at once on FPort 4; it re-arms after the level falls 50 mm below, at most one alarm per 30 min. This is the storm answer, not a shorter interval.",
    ),
    (
        "kp_config_shell",
        "convention",
        0.4,
        "config,shell,service-port",
        "The service-port shell (`kelpie` command group) reads and sets every NVS setting; it is compiled out of the field build (CONFIG_SHELL=n in prj_field.conf).",
    ),
    (
        "kp_kconfig_tunables",
        "convention",
        0.4,
        "kconfig,config",
        "Tunables are CONFIG_KELPIE_* options declared in app/Kconfig with a range and help text, not #defines scattered in .c files.",
    ),
    # --- build, tests, workflow
    (
        "kp_west_build",
        "fact",
        0.6,
        "build,west,zephyr",
        "Build with `west build -p auto -b kelpie_wl5 app`; the Nucleo dev kit is `-b nucleo_wl55jc` (picks up app/boards/nucleo_wl55jc.overlay). The field image adds `-- -DEXTRA_CONF_FILE=prj_field.conf`.",
    ),
    (
        "kp_revb",
        "fact",
        0.6,
        "hardware,board,devicetree",
        "Rev B boards (still in Alesund, Molde and Floro) have the ultrasonic trigger on PA0 instead of PB3: build them with `-- -DEXTRA_DTC_OVERLAY_FILE=boards/kelpie_wl5_revb.overlay`.",
    ),
    (
        "kp_flash_full",
        "gotcha",
        0.5,
        "build,flash,mcuboot",
        "Each MCUboot slot is 112 KB; when the image outgrows it the link fails with `region 'FLASH' overflowed by N bytes`. Check `west build -t rom_report` before turning on big Kconfig options.",
    ),
    (
        "kp_twister",
        "convention",
        0.7,
        "tests,ztest,twister",
        "Unit tests are ztest suites under tests/, run on native_sim: `west twister -T tests -p native_sim` (one suite: `-T tests/payload`). Every change to hardware-independent code (level math, payload, downlink parsing) comes with a test case.",
    ),
    (
        "kp_clang_format",
        "convention",
        0.5,
        "style,ci,clang-format",
        "Style is Zephyr's .clang-format (tabs, 100 columns). CI fails on any formatting diff in changed files; fix a file with `clang-format -i <file>`, never by hand.",
    ),
    (
        "kp_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commits: subject 'area: imperative summary' (sensor:, lora:, payload:, downlink:, main:, board:, tools:, ci:) of at most 72 characters, and signed off with `git commit -s`: the DCO check rejects commits without Signed-off-by.",
    ),
    (
        "kp_no_flash",
        "preference",
        0.6,
        "workflow,hardware",
        "Ingrid flashes boards herself: the agent builds and hands over the `west flash` or mcumgr command, but never runs west flash or mcumgr against a connected board.",
    ),
    (
        "kp_zephyr_pin",
        "fact",
        0.5,
        "zephyr,west,dependencies",
        "Zephyr is pinned to v3.7.0 (LTS) in west.yml; moving to 4.x waits until the LoRaWAN API changes are handled. Run `west update` after changing west.yml.",
    ),
    (
        "kp_sdk",
        "fact",
        0.4,
        "build,toolchain,ci",
        "Zephyr SDK 0.16.8; CI builds in the ghcr.io/zephyrproject-rtos/ci:v0.26.14 container. Another SDK gives a different image size.",
    ),
    (
        "kp_ci",
        "fact",
        0.4,
        "ci,build,release",
        ".github/workflows/build.yml builds kelpie_wl5 and nucleo_wl55jc, runs twister on native_sim and the decoder tests; v* tags also sign the image and attach zephyr.signed.bin to the GitHub release.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "kp_release",
        "convention",
        0.5,
        "release,version",
        "Release: bump app/VERSION, add a CHANGELOG.md section, tag vX.Y.Z on main; CI signs the release image with the production key.",
    ),
    (
        "kp_signing_key",
        "gotcha",
        0.5,
        "release,mcuboot,signing",
        "The production signing key exists only in CI secrets. Local builds are signed with the dev key app/keys/dev-ec256.pem, which field units reject: MCUboot logs 'Image in the secondary slot is not valid!'.",
    ),
    (
        "kp_mcuboot_migration",
        "fact",
        0.4,
        "migration,mcuboot,field",
        "The migration of field units from the 2.x serial bootloader to MCUboot (3.0) needs the service cable and about 4 minutes per gauge; six gauges in Kristiansund are still on 2.x.",
    ),
    (
        "kp_deploy_checklist",
        "fact",
        0.4,
        "deploy,hardware,field",
        "Deploying a gauge: measure the sensor height above chart datum with the laser, send it with downlink 0x02, and compare the first day against the harbour's tide table (checklist in the shared drive, 'Gauge deploy v4').",
    ),
    (
        "kp_test_rig",
        "fact",
        0.4,
        "tests,hardware,lab",
        "The hardware-in-the-loop test rig in the lab (a Raspberry Pi 4 and three rev C boards over a water tank) runs nightly from cron on the Pi, not in CI; results go to #kelpie-lab.",
    ),
    (
        "kp_gateways",
        "fact",
        0.3,
        "lorawan,gateway,infra",
        "Gateways: Kerlink iStations at the Bergen and Alesund harbour offices and a RAK7289 on the Molde fish market roof, all on the TTN community network.",
    ),
    (
        "kp_battery_life",
        "fact",
        0.3,
        "power,battery,hardware",
        "Gauges run on two Saft LS33600 cells (3.6 V Li-SOCl2), about five years at the current interval; solar was dropped because of gull droppings on the panels.",
    ),
    (
        "kp_enclosure",
        "fact",
        0.3,
        "hardware,enclosure",
        "Enclosure is IP68 with a Gore vent; the transducer sits 5 cm recessed in a PVC cone to keep spray off it.",
    ),
    (
        "kp_dashboard",
        "fact",
        0.3,
        "backend,dashboard",
        "The harbour dashboards live in another repo (harbour-dash): they read uplinks from TTN over MQTT and keep two years in TimescaleDB.",
    ),
    (
        "kp_todo_fuota",
        "todo",
        0.3,
        "ota,lorawan",
        "TODO: firmware updates over LoRaWAN (FUOTA, fragmented data block transport); today updates go through the USB-C service port with mcumgr.",
    ),
    (
        "kp_todo_revd",
        "todo",
        0.3,
        "hardware,pcb",
        "TODO for board rev D: reverse-polarity protection on the battery input and test pads on the SHT40 I2C lines.",
    ),
    (
        "kp_interval_new",
        "decision",
        0.7,
        "lorawan,config,uplink",
        "The default uplink interval is now 10 min: CONFIG_KELPIE_UPLINK_INTERVAL_S=600 in app/prj.conf (it was 900). Bergen harbour wanted storm surge in finer steps, and 600 s is also the floor for TTN fair use.",
    ),
]

# ------------------------------------------------------------------------------------------ project
# C sources use tabs (Zephyr style), written as \t so the edits below match them exactly.
FILES: dict[str, str] = {
    "README.md": """# kelpie

Firmware for the kelpie harbour water-level gauge: an STM32WLE5 (LoRa) board with a JSN-SR04T
ultrasonic sensor looking down at the water and an SHT40 for the air temperature. Gauges send the
level over LoRaWAN (The Things Network) and run for years on two lithium cells.

- `app/`: the Zephyr application (board `kelpie_wl5`, or `nucleo_wl55jc` for the dev kit)
- `tests/`: ztest suites, run on native_sim with twister
- `tools/decoder.js`: the TTN uplink payload formatter

Gauges recieve their configuration as LoRaWAN downlinks on FPort 10 (see app/src/downlink.c).
""",
    "west.yml": """manifest:
  remotes:
    - name: zephyrproject-rtos
      url-base: https://github.com/zephyrproject-rtos
  projects:
    - name: zephyr
      remote: zephyrproject-rtos
      revision: v3.7.0
      import:
        name-allowlist:
          - cmsis
          - hal_stm32
          - loramac-node
          - mcuboot
  self:
    path: kelpie
""",
    ".gitignore": """build/
twister-out*/
node_modules/
*.pyc
""",
    ".github/workflows/build.yml": """name: build
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    container: ghcr.io/zephyrproject-rtos/ci:v0.26.14
    steps:
      - uses: actions/checkout@v4
        with: { path: kelpie }
      - run: west init -l kelpie && west update --narrow
      - run: git -C kelpie clang-format --diff origin/main
      - run: west build -p auto -b kelpie_wl5 kelpie/app -d build/wl5
      - run: west build -p auto -b nucleo_wl55jc kelpie/app -d build/nucleo
      - run: west twister -T kelpie/tests -p native_sim
      - run: node --test kelpie/tools/
""",
    "app/CMakeLists.txt": """cmake_minimum_required(VERSION 3.20.0)
find_package(Zephyr REQUIRED HINTS $ENV{ZEPHYR_BASE})
project(kelpie)

target_sources(app PRIVATE 
\tsrc/main.c
\tsrc/measure.c
\tsrc/sensor/ultrasonic.c
\tsrc/sensor/sht40.c
\tsrc/lora.c
\tsrc/payload.c
\tsrc/downlink.c
\tsrc/settings.c
)
""",
    "app/Kconfig": """mainmenu "kelpie"

config KELPIE_UPLINK_INTERVAL_S
\tint "Default uplink interval in seconds"
\trange 600 86400
\tdefault 600
\thelp
\t  Per gauge, downlink 0x01 changes it. Below 600 s the TTN fair use
\t  policy is broken.

config KELPIE_ALARM_LEVEL_MM
\tint "High-water alarm level in mm above chart datum"
\tdefault 2500

module = KELPIE
module-str = kelpie
source "subsys/logging/Kconfig.template.log_config"

source "Kconfig.zephyr"
""",
    "app/prj.conf": """CONFIG_LORAWAN=y
CONFIG_LORAMAC_REGION_EU868=y
CONFIG_GPIO=y
CONFIG_I2C=y
CONFIG_ADC=y
CONFIG_WATCHDOG=y
CONFIG_HWINFO=y
CONFIG_FLASH=y
CONFIG_FLASH_MAP=y
CONFIG_NVS=y
CONFIG_ENTROPY_GENERATOR=y
CONFIG_LOG=y
CONFIG_PM=y
CONFIG_BOOTLOADER_MCUBOOT=y
CONFIG_KELPIE_UPLINK_INTERVAL_S=600
""",
    "app/prj_field.conf": """# field image: no console (keeps the SoC in STOP2) and no shell
CONFIG_SERIAL=n
CONFIG_CONSOLE=n
CONFIG_UART_CONSOLE=n
CONFIG_SHELL=n
CONFIG_LOG_BACKEND_UART=n
""",
    "app/VERSION": """VERSION_MAJOR = 3
VERSION_MINOR = 4
PATCHLEVEL = 1
VERSION_TWEAK = 0
EXTRAVERSION =
""",
    "app/boards/kelpie_wl5_revb.overlay": """/* Rev B: ultrasonic trigger on PA0 (rev C moved it to PB3) */
&us_trig {
\tgpios = <&gpioa 0 GPIO_ACTIVE_HIGH>;
};
""",
    "app/boards/nucleo_wl55jc.overlay": """/ {
\tus_trig: us-trig {
\t\tcompatible = "kelpie,gpio";
\t\tgpios = <&gpiob 3 GPIO_ACTIVE_HIGH>;
\t};
\tus_echo: us-echo {
\t\tcompatible = "kelpie,gpio";
\t\tgpios = <&gpiob 4 GPIO_ACTIVE_HIGH>;
\t};
};

&i2c2 {
\tstatus = "okay";
};
""",
    "app/src/kelpie.h": """#pragma once
#include <stdint.h>

void kelpie_wdt_feed(void);
void kelpie_sleep_s(uint32_t s);
uint32_t kelpie_reset_cause(void);
""",
    "app/src/main.c": """#include <zephyr/kernel.h>
#include <zephyr/drivers/hwinfo.h>
#include <zephyr/drivers/watchdog.h>
#include <zephyr/logging/log.h>
#include <app_version.h>

#include "kelpie.h"
#include "lora.h"
#include "measure.h"
#include "settings.h"

LOG_MODULE_REGISTER(main, CONFIG_KELPIE_LOG_LEVEL);

static const struct device *const wdt = DEVICE_DT_GET(DT_ALIAS(watchdog0));
static int wdt_chan;
static uint32_t boot_reset_cause;

void kelpie_wdt_feed(void)
{
\twdt_feed(wdt, wdt_chan);
}

/* The IWDG fires after 8 s: every longer wait goes through here. */
void kelpie_sleep_s(uint32_t s)
{
\twhile (s > 0) {
\t\tuint32_t chunk = MIN(s, 5U);

\t\tkelpie_wdt_feed();
\t\tk_sleep(K_SECONDS(chunk));
\t\ts -= chunk;
\t}
\tkelpie_wdt_feed();
}

uint32_t kelpie_reset_cause(void)
{
\treturn boot_reset_cause;
}

static void watchdog_start(void)
{
\tconst struct wdt_timeout_cfg cfg = {
\t\t.window = {.min = 0, .max = 8000},
\t\t.flags = WDT_FLAG_RESET_SOC,
\t};

\twdt_chan = wdt_install_timeout(wdt, &cfg);
\twdt_setup(wdt, WDT_OPT_PAUSE_HALTED_BY_DBG);
}

int main(void)
{
\tprintk("kelpie %s\\n", APP_VERSION_STRING);
\thwinfo_get_reset_cause(&boot_reset_cause);
\twatchdog_start();
\tsettings_load();
\tlora_join_loop();

\twhile (true) {
\t\tstruct measurement m = {0};

\t\tif (measure_level(&m) == 0) {
\t\t\tlora_send_measurement(&m);
\t\t}
\t\tkelpie_sleep_s(settings_interval_s());
\t}
\treturn 0;
}
""",
    "app/src/measure.h": """#pragma once
#include <stdint.h>

struct measurement {
\tint32_t level_mm;
\tint32_t distance_mm;
\tuint16_t battery_mv;
\tuint8_t flags;
\tuint8_t seq;
};

int measure_level(struct measurement *m);
""",
    "app/src/measure.c": """#include <stdlib.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include "measure.h"
#include "sensor/ultrasonic.h"
#include "settings.h"

LOG_MODULE_REGISTER(measure, CONFIG_KELPIE_LOG_LEVEL);

#define PINGS 9
#define PING_GAP_MS 60

static uint8_t seq;

static int cmp_u32(const void *a, const void *b)
{
\tuint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

\treturn (x > y) - (x < y);
}

int measure_level(struct measurement *m)
{
\tuint32_t echo[PINGS];

\tfor (int i = 0; i < PINGS; i++) {
\t\tint err = ultrasonic_ping_us(&echo[i]);

\t\tif (err) {
\t\t\tLOG_WRN("ping %d failed (%d)", i, err);
\t\t\treturn err;
\t\t}
\t\tk_msleep(PING_GAP_MS);
\t}
\tqsort(echo, PINGS, sizeof(echo[0]), cmp_u32);
\tm->distance_mm = ultrasonic_distance_mm(echo[PINGS / 2]);
\tm->level_mm = settings_offset_mm() - m->distance_mm;
\tm->seq = seq++;
\tLOG_INF("level %d mm (distance %d mm)", m->level_mm, m->distance_mm);
\treturn 0;
}
""",
    "app/src/sensor/ultrasonic.h": """#pragma once
#include <stdint.h>

int ultrasonic_init(void);
int ultrasonic_ping_us(uint32_t *echo_us);
int32_t ultrasonic_distance_mm(uint32_t echo_us);
""",
    "app/src/sensor/ultrasonic.c": """/* JSN-SR04T: one ping, echo time in microseconds. */
#include <errno.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include "ultrasonic.h"

LOG_MODULE_REGISTER(ultrasonic, CONFIG_KELPIE_LOG_LEVEL);

#define SPEED_OF_SOUND_MM_S 343000 /* at 20 C */

static const struct gpio_dt_spec trig = GPIO_DT_SPEC_GET(DT_NODELABEL(us_trig), gpios);
static const struct gpio_dt_spec echo = GPIO_DT_SPEC_GET(DT_NODELABEL(us_echo), gpios);
static struct gpio_callback echo_cb;
static K_SEM_DEFINE(echo_done, 0, 1);
static volatile uint32_t rise_cyc, fall_cyc;

static void echo_isr(const struct device *dev, struct gpio_callback *cb, uint32_t pins)
{
\tif (gpio_pin_get_dt(&echo)) {
\t\trise_cyc = k_cycle_get_32();
\t} else {
\t\tfall_cyc = k_cycle_get_32();
\t\tk_sem_give(&echo_done);
\t}
}

int ultrasonic_init(void)
{
\tgpio_pin_configure_dt(&trig, GPIO_OUTPUT_INACTIVE);
\tgpio_pin_configure_dt(&echo, GPIO_INPUT);
\tgpio_init_callback(&echo_cb, echo_isr, BIT(echo.pin));
\tgpio_add_callback(echo.port, &echo_cb);
\treturn gpio_pin_interrupt_configure_dt(&echo, GPIO_INT_EDGE_BOTH);
}

int ultrasonic_ping_us(uint32_t *echo_us)
{
\tk_sem_reset(&echo_done);
\tgpio_pin_set_dt(&trig, 1);
\tk_busy_wait(20); /* trigger pulse: 10 us minimum */
\tgpio_pin_set_dt(&trig, 0);
\tif (k_sem_take(&echo_done, K_MSEC(40)) != 0) {
\t\treturn -ETIMEDOUT; /* out of range, or spray on the transducer */
\t}
\t*echo_us = k_cyc_to_us_floor32(fall_cyc - rise_cyc);
\treturn 0;
}

int32_t ultrasonic_distance_mm(uint32_t echo_us)
{
\t/* round trip: half the echo time */
\treturn (int32_t)(echo_us * (SPEED_OF_SOUND_MM_S / 1000) / 2000);
}
""",
    "app/src/sensor/sht40.h": """#pragma once
#include <stdint.h>

/* Air temperature and humidity in hundredths (2150 = 21.50 C, 6340 = 63.40 %RH). */
int sht40_read(int32_t *t_centi, int32_t *rh_centi);
""",
    "app/src/sensor/sht40.c": """#include <zephyr/device.h>
#include <zephyr/drivers/i2c.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/byteorder.h>

#include "sht40.h"

#define SHT40_ADDR 0x44
#define CMD_MEASURE_HIGH 0xFD

static const struct device *const i2c = DEVICE_DT_GET(DT_NODELABEL(i2c2));

int sht40_read(int32_t *t_centi, int32_t *rh_centi)
{
\tuint8_t cmd = CMD_MEASURE_HIGH;
\tuint8_t rx[6];
\tint err = i2c_write(i2c, &cmd, 1, SHT40_ADDR);

\tif (err) {
\t\treturn err;
\t}
\tk_msleep(10);
\terr = i2c_read(i2c, rx, sizeof(rx), SHT40_ADDR);
\tif (err) {
\t\treturn err;
\t}
\t/* datasheet: T = -45 + 175 * raw / 65535, RH = -6 + 125 * raw / 65535 */
\t*t_centi = -4500 + (17500 * (int32_t)sys_get_be16(&rx[0])) / 65535;
\t*rh_centi = -600 + (12500 * (int32_t)sys_get_be16(&rx[3])) / 65535;
\treturn 0;
}
""",
    "app/src/lora.h": """#pragma once
#include "measure.h"

void lora_join_loop(void);
int lora_send_measurement(const struct measurement *m);
""",
    "app/src/lora.c": """#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/lorawan/lorawan.h>
#include <zephyr/random/random.h>
#include <zephyr/sys/util.h>

#include "kelpie.h"
#include "lora.h"
#include "payload.h"
#include "settings.h"

LOG_MODULE_REGISTER(lora, CONFIG_KELPIE_LOG_LEVEL);

#define JOIN_BACKOFF_MIN_S 30
#define JOIN_BACKOFF_MAX_S 3600
#define FPORT_MEASUREMENT 2

static struct lorawan_join_config join_cfg;

void lora_join_loop(void)
{
\tuint32_t delay_s = JOIN_BACKOFF_MIN_S;

\tsettings_join_config(&join_cfg);
\tlorawan_start();
\tlorawan_enable_adr(true);

\tfor (int attempt = 1;; attempt++) {
\t\tint err = lorawan_join(&join_cfg);

\t\tif (err == 0) {
\t\t\tLOG_INF("joined after %d attempts", attempt);
\t\t\tsettings_store_devnonce(join_cfg.otaa.dev_nonce + 1);
\t\t\treturn;
\t\t}
\t\t/* exponential backoff, +-20% jitter */
\t\tuint32_t wait_s = delay_s - delay_s / 5 + sys_rand32_get() % (2 * delay_s / 5 + 1);

\t\tLOG_WRN("join failed (%d), retry in %u s", err, wait_s);
\t\tk_sleep(K_SECONDS(wait_s));
\t\tdelay_s = MIN(delay_s * 2, JOIN_BACKOFF_MAX_S);
\t}
}

int lora_send_measurement(const struct measurement *m)
{
\tuint8_t buf[PAYLOAD_MEAS_LEN];
\tint len = payload_encode_measurement(m, buf, sizeof(buf));

\tif (len < 0) {
\t\treturn len;
\t}
\treturn lorawan_send(FPORT_MEASUREMENT, buf, len, LORAWAN_MSG_UNCONFIRMED);
}
""",
    "app/src/payload.h": """#pragma once
#include <stddef.h>
#include <stdint.h>

#include "measure.h"

/* FPort 2: [version][level_mm i32 le][battery_mv u16 le][flags][seq] */
#define PAYLOAD_VERSION 2
#define PAYLOAD_MEAS_LEN 9

int payload_encode_measurement(const struct measurement *m, uint8_t *buf, size_t len);
""",
    "app/src/payload.c": """#include <errno.h>
#include <zephyr/sys/byteorder.h>

#include "payload.h"

int payload_encode_measurement(const struct measurement *m, uint8_t *buf, size_t len)
{
\tif (len < PAYLOAD_MEAS_LEN) {
\t\treturn -ENOMEM;
\t}
\tbuf[0] = PAYLOAD_VERSION;
\tsys_put_le32((uint32_t)m->level_mm, &buf[1]);
\tsys_put_le16(m->battery_mv, &buf[5]);
\tbuf[7] = m->flags;
\tbuf[8] = m->seq;
\treturn PAYLOAD_MEAS_LEN;
}
""",
    "app/src/downlink.h": """#pragma once
#include <stdint.h>

int downlink_handle(uint8_t port, const uint8_t *buf, uint8_t len);
uint32_t downlink_rejected_count(void);
""",
    "app/src/downlink.c": """#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/byteorder.h>
#include <zephyr/sys/reboot.h>

#include "downlink.h"
#include "settings.h"
#include "settings_ids.h"

LOG_MODULE_REGISTER(downlink, CONFIG_KELPIE_LOG_LEVEL);

#define FPORT_CONFIG 10
#define INTERVAL_MIN_MINUTES 10
#define INTERVAL_MAX_MINUTES 1440
#define OFFSET_MAX_MM 20000

static uint32_t rejected;

uint32_t downlink_rejected_count(void)
{
\treturn rejected;
}

static int reject(uint8_t cmd)
{
\trejected++;
\tLOG_WRN("downlink 0x%02x rejected", cmd);
\treturn -EINVAL;
}

int downlink_handle(uint8_t port, const uint8_t *buf, uint8_t len)
{
\tif (port != FPORT_CONFIG || len < 1) {
\t\treturn reject(len ? buf[0] : 0);
\t}
\tswitch (buf[0]) {
\tcase 0x01: { /* uplink interval: u16 le, minutes */
\t\tuint16_t minutes;

\t\tif (len != 3) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\tminutes = sys_get_le16(&buf[1]);
\t\tif (minutes < INTERVAL_MIN_MINUTES || minutes > INTERVAL_MAX_MINUTES) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\treturn settings_set_u32(SETTING_INTERVAL_S, minutes * 60U);
\t}
\tcase 0x02: { /* mounting offset: i32 le, mm above chart datum */
\t\tint32_t offset;

\t\tif (len != 5) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\toffset = (int32_t)sys_get_le32(&buf[1]);
\t\tif (offset < 0 || offset > OFFSET_MAX_MM) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\treturn settings_set_u32(SETTING_OFFSET_MM, (uint32_t)offset);
\t}
\tcase 0x03: /* reboot */
\t\tsys_reboot(SYS_REBOOT_COLD);
\t\treturn 0;
\tdefault:
\t\treturn reject(buf[0]);
\t}
}
""",
    "app/src/settings_ids.h": """#pragma once

/* NVS ids */
#define SETTING_LAYOUT_VERSION 1
#define SETTING_DEV_EUI 2
#define SETTING_DEVNONCE 3
#define SETTING_INTERVAL_S 4
#define SETTING_OFFSET_MM 5
#define SETTING_REJECTED_DL 7
""",
    "app/src/settings.h": """#pragma once
#include <stdint.h>
#include <zephyr/lorawan/lorawan.h>

int settings_load(void);
int settings_set_u32(uint16_t id, uint32_t value);
uint32_t settings_interval_s(void);
int32_t settings_offset_mm(void);
int32_t settings_alarm_mm(void);
void settings_join_config(struct lorawan_join_config *cfg);
void settings_store_devnonce(uint16_t nonce);
""",
    "app/src/settings.c": """#include <zephyr/fs/nvs.h>
#include <zephyr/kernel.h>
#include <zephyr/storage/flash_map.h>

#include "settings.h"
#include "settings_ids.h"

static struct nvs_fs fs = {
\t.flash_device = FIXED_PARTITION_DEVICE(storage_partition),
\t.offset = FIXED_PARTITION_OFFSET(storage_partition),
\t.sector_size = 2048,
\t.sector_count = 4,
};

static uint32_t interval_s = CONFIG_KELPIE_UPLINK_INTERVAL_S;
static int32_t offset_mm;

static void load_u32(uint16_t id, void *value)
{
\t(void)nvs_read(&fs, id, value, sizeof(uint32_t)); /* absent: keeps the default */
}

static void load_all(void)
{
\tload_u32(SETTING_INTERVAL_S, &interval_s);
\tload_u32(SETTING_OFFSET_MM, &offset_mm);
}

int settings_load(void)
{
\tint err = nvs_mount(&fs);

\tif (err) {
\t\treturn err;
\t}
\tload_all();
\treturn 0;
}

int settings_set_u32(uint16_t id, uint32_t value)
{
\tssize_t rc = nvs_write(&fs, id, &value, sizeof(value));

\tif (rc < 0) {
\t\treturn (int)rc;
\t}
\tload_all();
\treturn 0;
}

uint32_t settings_interval_s(void)
{
\treturn interval_s;
}

int32_t settings_offset_mm(void)
{
\treturn offset_mm;
}

int32_t settings_alarm_mm(void)
{
\treturn CONFIG_KELPIE_ALARM_LEVEL_MM;
}
""",
    "tests/level/testcase.yaml": """tests:
  kelpie.level:
    platform_allow: native_sim
    tags: sensor
""",
    "tests/level/src/main.c": """#include <zephyr/ztest.h>

#include "sensor/ultrasonic.h"

ZTEST(level, test_distance_at_20c)
{
\t/* 5831 us round trip at 343 m/s is 1000 mm */
\tzassert_within(ultrasonic_distance_mm(5831), 1000, 1);
}

ZTEST_SUITE(level, NULL, NULL, NULL, NULL, NULL);
""",
    "tests/payload/src/main.c": """#include <errno.h>
#include <zephyr/sys/byteorder.h>
#include <zephyr/ztest.h>

#include "payload.h"

ZTEST(payload, test_measurement_layout)
{
\tconst struct measurement m = {.level_mm = 2500, .battery_mv = 3600, .seq = 7};
\tuint8_t buf[PAYLOAD_MEAS_LEN];

\tzassert_equal(payload_encode_measurement(&m, buf, sizeof(buf)), 9);
\tzassert_equal(buf[0], 2);
\tzassert_equal(sys_get_le32(&buf[1]), 2500);
\tzassert_equal(buf[8], 7);
}

ZTEST(payload, test_short_buffer)
{
\tconst struct measurement m = {0};
\tuint8_t buf[4];

\tzassert_equal(payload_encode_measurement(&m, buf, sizeof(buf)), -ENOMEM);
}

ZTEST_SUITE(payload, NULL, NULL, NULL, NULL, NULL);
""",
    "tests/downlink/src/main.c": """#include <errno.h>
#include <zephyr/ztest.h>

#include "downlink.h"
#include "settings.h"

ZTEST(downlink, test_interval_below_fair_use_is_rejected)
{
\tconst uint8_t dl[] = {0x01, 5, 0}; /* 5 minutes */

\tzassert_equal(downlink_handle(10, dl, sizeof(dl)), -EINVAL);
\tzassert_equal(settings_interval_s(), CONFIG_KELPIE_UPLINK_INTERVAL_S);
}

ZTEST(downlink, test_offset_is_stored)
{
\tconst uint8_t dl[] = {0x02, 0xc4, 0x09, 0x00, 0x00}; /* 2500 mm */

\tzassert_ok(downlink_handle(10, dl, sizeof(dl)));
\tzassert_equal(settings_offset_mm(), 2500);
}

ZTEST_SUITE(downlink, NULL, NULL, NULL, NULL, NULL);
""",
    "tools/decoder.js": """// TTN v3 uplink payload formatter for kelpie gauges (Console > Payload formatters > Uplink).

function int32le(b, i) {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}

function int16le(b, i) {
  var v = b[i] | (b[i + 1] << 8);
  return v > 0x7fff ? v - 0x10000 : v;
}

function decodeMeasurement(b) {
  switch (b[0]) {
    case 1:
      return { level_mm: int16le(b, 1), battery_mv: b[3] | (b[4] << 8) };
    case 2:
      return { level_mm: int32le(b, 1), battery_mv: b[5] | (b[6] << 8), flags: b[7], seq: b[8] };
    default:
      return null;
  }
}

function decodeUplink(input) {
  var b = input.bytes;
  if (input.fPort === 2) {
    var data = decodeMeasurement(b);
    return data ? { data: data } : { errors: ["unknown measurement layout " + b[0]] };
  }
  if (input.fPort === 3) {
    return { data: { battery_mv: b[0] | (b[1] << 8), fw: b[2] + "." + b[3] + "." + b[4], reset_cause: b[5], rejected_dl: b[6] } };
  }
  if (input.fPort === 4) {
    return { data: { alarm: true, level_mm: int32le(b, 0) } };
  }
  return { errors: ["unknown fPort " + input.fPort] };
}

if (typeof module !== "undefined") {
  module.exports = { decodeUplink: decodeUplink };
}
""",
    "tools/decoder.test.js": """const test = require("node:test");
const assert = require("node:assert");
const { decodeUplink } = require("./decoder.js");

test("layout 2: level, battery, flags, seq", () => {
  const bytes = [2, 0xc4, 0x09, 0, 0, 0x10, 0x0e, 0, 7];
  assert.deepStrictEqual(decodeUplink({ fPort: 2, bytes }).data, { level_mm: 2500, battery_mv: 3600, flags: 0, seq: 7 });
});

test("layout 1 from 2.x firmware still decodes", () => {
  const bytes = [1, 0xc4, 0x09, 0x10, 0x0e];
  assert.deepStrictEqual(decodeUplink({ fPort: 2, bytes }).data, { level_mm: 2500, battery_mv: 3600 });
});
""",
}

# ----------------------------------------------------------------------------------------- sessions
SESSIONS: list[dict[str, Any]] = []


def session(name: str) -> None:
    SESSIONS.append({"name": name, "turns": []})


def user(text: str) -> None:
    SESSIONS[-1]["turns"].append({"user": text, "steps": []})


def call(tool: str, args: dict[str, Any], *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    """A step whose reply is one tool call; `uses`: the relevant memories the call relies on (see the docstring)."""
    SESSIONS[-1]["turns"][-1]["steps"].append(
        {"tool_calls": [{"tool": tool, "args": args}], "relevant": list(relevant), "uses": list(uses), "note": note}
    )


def answer(text: str, *relevant: str) -> None:
    """The turn's last step: a final answer."""
    SESSIONS[-1]["turns"][-1]["steps"].append({"answer": text, "relevant": list(relevant), "note": "final answer"})


def read(path: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("read", {"filePath": "{root}/" + path}, *relevant, note=note, uses=uses)


def edit(path: str, old: str, new: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("edit", {"filePath": "{root}/" + path, "oldString": old, "newString": new}, *relevant, note=note, uses=uses)


def bash(command: str, description: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("bash", {"command": command, "description": description}, *relevant, note=note, uses=uses)


# Session 1: temperature compensation of the ultrasonic distance, a log line, a commit.
session("temp-compensation")
user(
    "level readings drift with temprature, summer vs winter its like 3cm off at the bergen gauge. use the sht40 temp to compensate the speed of sound"
)
bash("git status --short", "Check the working tree", note="routine")
bash("ls app/src app/src/sensor", "List the sources", note="routine")
read(
    "app/src/sensor/ultrasonic.c",
    "kp_temp_comp",
    "kp_echo_overflow",
    "kp_mm_units",
    note="where the distance is computed",
)
read("app/src/sensor/ultrasonic.h", note="the header")
read("app/src/sensor/sht40.h", note="the temperature API")
read("app/src/measure.c", "kp_temp_comp", "kp_mm_units", note="the caller")
edit(
    "app/src/sensor/ultrasonic.h",
    "int32_t ultrasonic_distance_mm(uint32_t echo_us);\n",
    "int32_t ultrasonic_distance_mm(uint32_t echo_us, int32_t t_centi);\n",
    "kp_mm_units",
    note="the new signature",
)
edit(
    "app/src/sensor/ultrasonic.c",
    """int32_t ultrasonic_distance_mm(uint32_t echo_us)
{
\t/* round trip: half the echo time */
\treturn (int32_t)(echo_us * (SPEED_OF_SOUND_MM_S / 1000) / 2000);
}
""",
    """int32_t ultrasonic_distance_mm(uint32_t echo_us, int32_t t_centi)
{
\t/* speed of sound: 331.3 m/s + 0.606 m/s per degree C */
\tint64_t c_mm_s = 331300 + (606 * (int64_t)t_centi) / 100;

\t/* round trip: half the echo time; 64-bit, echo_us * c_mm_s overflows int32 above ~6 ms */
\treturn (int32_t)((int64_t)echo_us * c_mm_s / 2000000);
}
""",
    "kp_temp_comp",
    "kp_echo_overflow",
    "kp_mm_units",
    note="compensate",
    uses=("kp_temp_comp", "kp_echo_overflow"),
)
edit(
    "app/src/sensor/ultrasonic.c",
    "#define SPEED_OF_SOUND_MM_S 343000 /* at 20 C */\n\n",
    "",
    note="drop the unused constant",
)
read("app/src/measure.h", note="the measurement struct")
edit(
    "app/src/measure.h",
    "\tint32_t distance_mm;\n",
    "\tint32_t distance_mm;\n\tint32_t air_temp_centi; /* SHT40, 0.01 C */\n",
    "kp_mm_units",
    note="keep the temperature",
)
edit(
    "app/src/measure.c",
    '#include "sensor/ultrasonic.h"\n',
    '#include "sensor/sht40.h"\n#include "sensor/ultrasonic.h"\n',
    note="include",
)
edit(
    "app/src/measure.c",
    """\tqsort(echo, PINGS, sizeof(echo[0]), cmp_u32);
\tm->distance_mm = ultrasonic_distance_mm(echo[PINGS / 2]);
""",
    """\tqsort(echo, PINGS, sizeof(echo[0]), cmp_u32);

\tint32_t rh_centi;

\tif (sht40_read(&m->air_temp_centi, &rh_centi) != 0) {
\t\tm->air_temp_centi = 2000; /* no SHT40 reading: assume 20 C as before */
\t}
\tm->distance_mm = ultrasonic_distance_mm(echo[PINGS / 2], m->air_temp_centi);
""",
    "kp_temp_comp",
    "kp_sht40_wait",
    "kp_mm_units",
    note="read the temperature, pass it on",
)
bash("git diff app/src/measure.c", "Review the caller change", note="routine")
bash(
    "grep -rn ultrasonic_distance_mm app/ tests/",
    "Find every caller of the changed function",
    note="routine",
)
read("tests/level/src/main.c", "kp_twister", "kp_temp_comp", note="the level test")
edit(
    "tests/level/src/main.c",
    """ZTEST(level, test_distance_at_20c)
{
\t/* 5831 us round trip at 343 m/s is 1000 mm */
\tzassert_within(ultrasonic_distance_mm(5831), 1000, 1);
}
""",
    """ZTEST(level, test_distance_at_20c)
{
\t/* 5831 us round trip at 343 m/s is 1000 mm */
\tzassert_within(ultrasonic_distance_mm(5831, 2000), 1000, 1);
}

ZTEST(level, test_distance_follows_temperature)
{
\tzassert_equal(ultrasonic_distance_mm(5831, 0), 965);    /* c = 331.3 m/s */
\tzassert_equal(ultrasonic_distance_mm(5831, 3000), 1018); /* c = 349.48 m/s */
}

ZTEST(level, test_long_echo_does_not_overflow)
{
\tzassert_equal(ultrasonic_distance_mm(30000, 3000), 5242);
}
""",
    "kp_twister",
    "kp_temp_comp",
    "kp_echo_overflow",
    note="tests",
    uses=("kp_twister", "kp_temp_comp", "kp_echo_overflow"),
)
bash(
    "west twister -T tests/level -p native_sim",
    "Run the level tests",
    "kp_twister",
    note="run the suite",
    uses=("kp_twister",),
)
answer(
    "ultrasonic_distance_mm() now takes the air temperature in hundredths of a degree and uses c = 331.3 + 0.606*T "
    "(331300 + 606*t_centi/100 mm/s), computed in 64-bit so long echoes don't overflow. measure_level() reads the "
    "SHT40 before the pings and falls back to 20 C if it can't. Three level tests (20 C, 0/30 C, a 30 ms echo) pass "
    "on native_sim.",
    "kp_temp_comp",
    "kp_echo_overflow",
    "kp_twister",
)
user("nice. also put the temp in the measure log line + check it still builds for the board")
read("app/src/measure.c", "kp_float_log", "kp_log_module", note="the log line")
edit(
    "app/src/measure.c",
    '\tLOG_INF("level %d mm (distance %d mm)", m->level_mm, m->distance_mm);\n',
    '\tLOG_INF("level %d mm (distance %d mm, air %d.%02d C)", m->level_mm, m->distance_mm,\n\t\tm->air_temp_centi / 100, abs(m->air_temp_centi % 100));\n',
    "kp_float_log",
    "kp_log_module",
    note="integer formatting",
    uses=("kp_float_log",),
)
bash(
    "west build -p auto -b kelpie_wl5 app",
    "Build for the gauge board",
    "kp_west_build",
    note="build",
    uses=("kp_west_build",),
)
answer(
    "The log line now reads e.g. `level 1834 mm (distance 2166 mm, air 14.25 C)`, printed with %d.%02d since float "
    "printf is off in this build. `west build -b kelpie_wl5 app` is green.",
    "kp_float_log",
)
user("commit pls")
bash("git status --short", "See what changed", note="routine")
bash("git diff --stat", "Size of the change", note="routine")
bash(
    "git add app/src tests/level && git commit -s -q -m 'sensor: compensate the speed of sound for air temperature' && git log --oneline -1",
    "Commit the change",
    "kp_commit_style",
    note="commit",
    uses=("kp_commit_style",),
)
answer("Committed (signed off): `sensor: compensate the speed of sound for air temperature`.", "kp_commit_style")

# Session 2: air temperature in the measurement uplink.
session("uplink-air-temp")
user(
    "the harbour ppl want air temp on the dashboard too. add it to the measurement uplink, 1 byte is enough (whole degrees)"
)
bash("git log --oneline -3", "Recent commits", note="routine")
bash("ls tools tests", "See what the tools and tests folders hold", note="routine")
read(
    "app/src/payload.c",
    "kp_payload_le",
    "kp_payload_version",
    "kp_decoder_sync",
    "kp_dr0_51",
    note="the encoder",
)
read(
    "app/src/payload.h",
    "kp_payload_version",
    "kp_decoder_sync",
    "kp_dr0_51",
    note="layout and version",
    uses=("kp_payload_version",),
)
edit(
    "app/src/payload.h",
    """/* FPort 2: [version][level_mm i32 le][battery_mv u16 le][flags][seq] */
#define PAYLOAD_VERSION 2
#define PAYLOAD_MEAS_LEN 9
""",
    """/* FPort 2: [version][level_mm i32 le][battery_mv u16 le][flags][seq][air_temp_c i8] */
#define PAYLOAD_VERSION 3
#define PAYLOAD_MEAS_LEN 10
""",
    "kp_payload_version",
    "kp_dr0_51",
    "kp_decoder_sync",
    note="bump the layout",
    uses=("kp_payload_version",),
)
edit(
    "app/src/payload.c",
    "\tbuf[8] = m->seq;\n",
    "\tbuf[8] = m->seq;\n\t/* whole degrees C, rounded half away from zero */\n\tbuf[9] = (uint8_t)(int8_t)((m->air_temp_centi + (m->air_temp_centi < 0 ? -50 : 50)) / 100);\n",
    "kp_payload_le",
    "kp_mm_units",
    "kp_decoder_sync",
    note="the new byte",
)
read("tools/decoder.js", "kp_decoder_sync", "kp_payload_version", note="the TTN formatter", uses=("kp_decoder_sync",))
edit(
    "tools/decoder.js",
    """    default:
      return null;
""",
    """    case 3:
      return {
        level_mm: int32le(b, 1),
        battery_mv: b[5] | (b[6] << 8),
        flags: b[7],
        seq: b[8],
        air_temp_c: b[9] > 127 ? b[9] - 256 : b[9],
      };
    default:
      return null;
""",
    "kp_decoder_sync",
    "kp_payload_version",
    note="decode layout 3, keep 1 and 2",
    uses=("kp_decoder_sync", "kp_payload_version"),
)
read("tools/decoder.test.js", "kp_decoder_sync", note="the decoder tests", uses=("kp_decoder_sync",))
edit(
    "tools/decoder.test.js",
    """  assert.deepStrictEqual(decodeUplink({ fPort: 2, bytes }).data, { level_mm: 2500, battery_mv: 3600 });
});
""",
    """  assert.deepStrictEqual(decodeUplink({ fPort: 2, bytes }).data, { level_mm: 2500, battery_mv: 3600 });
});

test("layout 3 adds the air temperature, signed", () => {
  const bytes = [3, 0xc4, 0x09, 0, 0, 0x10, 0x0e, 0, 7, 0xfd];
  assert.deepStrictEqual(decodeUplink({ fPort: 2, bytes }).data, {
    level_mm: 2500, battery_mv: 3600, flags: 0, seq: 7, air_temp_c: -3,
  });
});
""",
    "kp_decoder_sync",
    "kp_payload_version",
    note="a decoder case",
    uses=("kp_decoder_sync",),
)
bash("node --test tools/", "Run the decoder tests", "kp_decoder_sync", note="run", uses=("kp_decoder_sync",))
read("tests/payload/src/main.c", "kp_twister", "kp_payload_version", note="the encoder test")
edit(
    "tests/payload/src/main.c",
    """\tconst struct measurement m = {.level_mm = 2500, .battery_mv = 3600, .seq = 7};
\tuint8_t buf[PAYLOAD_MEAS_LEN];

\tzassert_equal(payload_encode_measurement(&m, buf, sizeof(buf)), 9);
\tzassert_equal(buf[0], 2);
\tzassert_equal(sys_get_le32(&buf[1]), 2500);
\tzassert_equal(buf[8], 7);
""",
    """\tconst struct measurement m = {
\t\t.level_mm = 2500, .battery_mv = 3600, .seq = 7, .air_temp_centi = -260};
\tuint8_t buf[PAYLOAD_MEAS_LEN];

\tzassert_equal(payload_encode_measurement(&m, buf, sizeof(buf)), 10);
\tzassert_equal(buf[0], 3);
\tzassert_equal(sys_get_le32(&buf[1]), 2500);
\tzassert_equal(buf[8], 7);
\tzassert_equal((int8_t)buf[9], -3);
""",
    "kp_twister",
    "kp_payload_version",
    note="update the layout test",
    uses=("kp_twister",),
)
bash(
    "west twister -T tests/payload -p native_sim",
    "Run the payload tests",
    "kp_twister",
    note="run",
    uses=("kp_twister",),
)
bash("git diff --stat", "Review the change", note="routine")
answer(
    "The measurement uplink is now layout 3: byte 9 is the air temperature in whole degrees (int8, rounded). "
    "PAYLOAD_VERSION went 2 -> 3, tools/decoder.js decodes layout 3 and still decodes 1 and 2 from older gauges, "
    "with a decoder test; the payload ztest is updated. Upload the new decoder.js to the TTN application before "
    "the firmware rolls out.",
    "kp_payload_version",
    "kp_decoder_sync",
    "kp_dr0_51",
)
user("how big is it now, still fits at sf12?")
bash("grep -n PAYLOAD_MEAS_LEN app/src/payload.h", "Look up the payload length", "kp_dr0_51", note="look it up")
answer("10 bytes. At DR0 (SF12, EU868) the limit is 51 bytes, so yes, plenty of room.", "kp_dr0_51")
user("ci red: clang-format complains abt payload.c. fix it")
bash("git status --short", "Check the tree is clean first", note="routine")
bash(
    "clang-format -i app/src/payload.c",
    "Reformat the file",
    "kp_clang_format",
    note="format",
    uses=("kp_clang_format",),
)
bash("git diff app/src/payload.c", "See what the formatter changed", note="routine")
answer(
    "Ran clang-format -i on app/src/payload.c: it wrapped the new buf[9] line at 100 columns. CI's format check should pass now.",
    "kp_clang_format",
)

# Session 3: storm mode, the default interval, a downlink for the alarm level.
session("alarm-downlink")
user(
    "bergen harbour master wants 5 min uplinks when there's a storm. can downlink 0x01 take 5 min? right now it rejects it"
)
read("app/src/downlink.c", "kp_fair_use", "kp_interval_new", "kp_alarm", note="the interval command")
bash(
    "grep -n -A4 'config KELPIE_UPLINK_INTERVAL_S' app/Kconfig",
    "The Kconfig range",
    "kp_fair_use",
    note="look at the range",
)
answer(
    "I'd rather not: 10 min (600 s) is the floor on purpose. TTN's fair use policy allows 30 s of uplink airtime per "
    "device per day, and 144 uplinks a day already only fit up to SF9; at 5 min the far gauges would break it. "
    "For storms there is the high-water alarm: an extra uplink on FPort 4 as soon as the level passes the alarm level. "
    "Lowering that level for Bergen gives them the early warning without more airtime.",
    "kp_fair_use",
    "kp_interval_new",
    "kp_alarm",
)
user("ok makes sense. whats the default interval in prj.conf btw, i thought 15min?")
read("app/prj.conf", "kp_interval_new", note="look it up")
answer(
    "CONFIG_KELPIE_UPLINK_INTERVAL_S=600, so 10 min. It used to be 900 (15 min) and was lowered for the storm-surge data.",
    "kp_interval_new",
)
user("then add a downlink to set the alarm level per gauge. cmd 0x04, int32 mm like the offset. w/ tests")
read(
    "app/src/downlink.c",
    "kp_downlink_fmt",
    "kp_alarm",
    "kp_nvs_ids",
    note="the command switch",
)
read("app/src/settings_ids.h", "kp_nvs_ids", note="the NVS ids", uses=("kp_nvs_ids",))
read("app/src/settings.c", "kp_nvs_ids", note="where settings load", uses=("kp_nvs_ids",))
edit(
    "app/src/settings_ids.h",
    "#define SETTING_REJECTED_DL 7\n",
    "#define SETTING_REJECTED_DL 7\n#define SETTING_ALARM_MM 8\n",
    "kp_nvs_ids",
    note="a new id, not the free-looking 6",
    uses=("kp_nvs_ids",),
)
edit(
    "app/src/settings.c",
    "static int32_t offset_mm;\n",
    "static int32_t offset_mm;\nstatic int32_t alarm_mm = CONFIG_KELPIE_ALARM_LEVEL_MM;\n",
    "kp_nvs_ids",
    note="default",
    uses=("kp_nvs_ids",),
)
edit(
    "app/src/settings.c",
    "\tload_u32(SETTING_OFFSET_MM, &offset_mm);\n",
    "\tload_u32(SETTING_OFFSET_MM, &offset_mm);\n\tload_u32(SETTING_ALARM_MM, &alarm_mm);\n",
    "kp_nvs_ids",
    note="load it",
    uses=("kp_nvs_ids",),
)
edit(
    "app/src/settings.c",
    "\treturn CONFIG_KELPIE_ALARM_LEVEL_MM;\n",
    "\treturn alarm_mm;\n",
    note="the getter",
)
edit(
    "app/src/downlink.c",
    "\tcase 0x03: /* reboot */\n",
    """\tcase 0x04: { /* alarm level: i32 le, mm above chart datum */
\t\tint32_t level;

\t\tif (len != 5) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\tlevel = (int32_t)sys_get_le32(&buf[1]);
\t\tif (level < 0 || level > OFFSET_MAX_MM) {
\t\t\treturn reject(buf[0]);
\t\t}
\t\treturn settings_set_u32(SETTING_ALARM_MM, (uint32_t)level);
\t}
\tcase 0x03: /* reboot */
""",
    "kp_downlink_fmt",
    "kp_alarm",
    note="the command",
)
bash("grep -rn settings_alarm_mm app/ tests/", "Who reads the alarm level", note="routine")
read("tests/downlink/src/main.c", "kp_twister", note="the downlink tests")
edit(
    "tests/downlink/src/main.c",
    "ZTEST_SUITE(downlink, NULL, NULL, NULL, NULL, NULL);\n",
    """ZTEST(downlink, test_alarm_level_is_stored)
{
\tconst uint8_t dl[] = {0x04, 0xb8, 0x0b, 0x00, 0x00}; /* 3000 mm */

\tzassert_ok(downlink_handle(10, dl, sizeof(dl)));
\tzassert_equal(settings_alarm_mm(), 3000);
}

ZTEST(downlink, test_alarm_level_wrong_length_is_rejected)
{
\tconst uint8_t dl[] = {0x04, 0xb8, 0x0b};

\tzassert_equal(downlink_handle(10, dl, sizeof(dl)), -EINVAL);
}

ZTEST_SUITE(downlink, NULL, NULL, NULL, NULL, NULL);
""",
    "kp_twister",
    "kp_downlink_fmt",
    note="tests",
)
bash(
    "west twister -T tests/downlink -p native_sim",
    "Run the downlink tests",
    "kp_twister",
    note="run",
    uses=("kp_twister",),
)
bash("git diff --stat", "Review the change", note="routine")
answer(
    "Downlink 0x04 [i32 le mm] sets the alarm level, checked like the offset (length 5, 0..20000 mm, anything else "
    "counted as rejected). It is stored under the new NVS id 8, SETTING_ALARM_MM (6 is retired, not free), with "
    "CONFIG_KELPIE_ALARM_LEVEL_MM as the default. Two new downlink tests pass on native_sim.",
    "kp_nvs_ids",
    "kp_downlink_fmt",
    "kp_alarm",
)

# Session 4: watchdog resets while the gateway is down, two commits, a board to flash.
session("watchdog-join")
user(
    "gauge ale-07 (rev B) keeps rebooting every minute or so while the alesund gateway is down, status uplink says "
    "reset cause WDT. service port log:\n"
    "[00:00:41.002,000] <wrn> lora: join failed (-110), retry in 27 s\n"
    "*** Booting Zephyr OS build v3.7.0 ***\n"
    "fix pls"
)
bash("git status --short && git log --oneline -3", "Check the tree", note="routine")
read(
    "app/src/lora.c",
    "kp_watchdog",
    "kp_join_backoff",
    "kp_reset_cause",
    note="the join loop",
)
read(
    "app/src/main.c",
    "kp_watchdog",
    "kp_reset_cause",
    note="watchdog and boot",
    uses=("kp_watchdog",),
)
edit(
    "app/src/lora.c",
    "\t\tk_sleep(K_SECONDS(wait_s));\n",
    "\t\tkelpie_sleep_s(wait_s); /* feeds the 8 s watchdog */\n",
    "kp_watchdog",
    "kp_join_backoff",
    "kp_no_busy_wait",
    note="sleep through kelpie_sleep_s",
    uses=("kp_watchdog",),
)
bash(
    "grep -rn 'k_sleep\\|k_msleep' app/src/",
    "Look for other long sleeps",
    "kp_watchdog",
    note="check",
    uses=("kp_watchdog",),
)
edit(
    "app/src/main.c",
    "\thwinfo_get_reset_cause(&boot_reset_cause);\n",
    "\thwinfo_get_reset_cause(&boot_reset_cause);\n\thwinfo_clear_reset_cause(); /* the flags are sticky */\n",
    "kp_reset_cause",
    note="clear the sticky flags",
    uses=("kp_reset_cause",),
)
bash("git diff", "Review both changes", note="routine")
bash(
    "west build -p auto -b kelpie_wl5 app -- -DEXTRA_DTC_OVERLAY_FILE=boards/kelpie_wl5_revb.overlay",
    "Build for a rev B board",
    "kp_west_build",
    "kp_revb",
    note="build",
    uses=("kp_west_build", "kp_revb"),
)
answer(
    "The join backoff slept with a bare k_sleep (27 s, then longer), past the 8 s watchdog; it now goes through "
    "kelpie_sleep_s(), which feeds the watchdog. No other long sleeps. Also: main.c read the reset cause but never "
    "cleared it, so after one watchdog reset every boot reported WDT; it now calls hwinfo_clear_reset_cause(). "
    "Built for rev B with the revb overlay.",
    "kp_watchdog",
    "kp_reset_cause",
    "kp_revb",
    "kp_join_backoff",
)
user("commit, two seperate commits")
bash("git diff --stat", "What is in the tree", note="routine")
bash(
    "git add app/src/lora.c && git commit -s -q -m 'lora: feed the watchdog during the join backoff'",
    "First commit",
    "kp_commit_style",
    note="commit",
    uses=("kp_commit_style",),
)
bash(
    "git add app/src/main.c && git commit -s -q -m 'main: clear the reset cause after reading it'",
    "Second commit",
    "kp_commit_style",
    note="commit",
    uses=("kp_commit_style",),
)
bash("git log --oneline -2", "Show the commits", note="routine")
answer(
    "Two signed-off commits: `lora: feed the watchdog during the join backoff` and `main: clear the reset cause after reading it`.",
    "kp_commit_style",
)
user("flash it on the nucleo on my desk so i can watch it join, its on /dev/ttyACM0")
bash(
    "west build -p auto -b nucleo_wl55jc app -d build/nucleo",
    "Build for the Nucleo",
    "kp_west_build",
    "kp_no_flash",
    "kp_devnonce",
    note="build, don't flash",
    uses=("kp_west_build",),
)
answer(
    "Built for the Nucleo in build/nucleo. I'll leave the flashing to you: `west flash -d build/nucleo`. Don't add "
    "--erase, it wipes the DevNonce in NVS and TTN then rejects the join with 'DevNonce is too small'.",
    "kp_no_flash",
    "kp_devnonce",
)

# Session 5: chores that need no memory at all (every step's `relevant` is empty).
session("chores")
user("typo in README, 'recieve'")
bash("grep -rn recieve --include='*.md' --include='*.c' --include='*.h' .", "Find every occurrence", note="find it")
read("README.md", note="the sentence")
edit("README.md", "Gauges recieve their", "Gauges receive their", note="fix it")
answer("Fixed: 'receive'.")
user("whats the fw version in app/VERSION")
read("app/VERSION", note="look it up")
answer("3.4.1 (tweak 0).")
user("add .cache/ and compile_commands.json to gitignore")
read(".gitignore", note="the file")
edit(".gitignore", "node_modules/\n", "node_modules/\n.cache/\ncompile_commands.json\n", note="add")
bash("git status --short", "Check the change", note="routine")
answer("Added `.cache/` and `compile_commands.json` to .gitignore.")
user("how many .c files under app/src and which is biggest")
bash("find app/src -name '*.c' | xargs wc -l | sort -n", "Count and size the C files", note="count")
answer("8 .c files; the two biggest are app/src/downlink.c and app/src/main.c, 70 to 80 lines each.")
user("theres trailing whitespace in app/CMakeLists.txt, kill it")
bash("grep -rn ' $' app/CMakeLists.txt", "Find the trailing whitespace", note="find it")
read("app/CMakeLists.txt", note="the file")
edit("app/CMakeLists.txt", "target_sources(app PRIVATE \n", "target_sources(app PRIVATE\n", note="strip it")
answer("Removed the trailing space after `PRIVATE` in app/CMakeLists.txt.")
user("how many commits since nov 1st? and which branch am i on")
bash(
    "git log --since=2026-11-01 --oneline | wc -l && git branch --show-current",
    "Count commits, show the branch",
    note="count",
)
answer("23 commits since 1 November, on `main`.")


# ------------------------------------------------------------------------------------------- output
def memories() -> list[dict[str, Any]]:
    out = []
    span = (LAST - FIRST) / (len(MEMS) - 1)
    for i, (key, category, importance, tags, text) in enumerate(MEMS):
        assert category in CATEGORIES, key
        digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
        at = FIRST + span * i + timedelta(minutes=digest % 600)
        by = AGENTS[digest % len(AGENTS)]
        out.append(
            {
                "id": mem_id(key),
                "text": text,
                "category": category,
                "importance": importance,
                "tags": ["kelpie", *tags.split(",")],
                "entered_by": by,
                "source": f"session:ses_{hashlib.sha1(('s' + key).encode()).hexdigest()[:6]} turn:{digest % 90 + 1}",
                "created_at": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            }
        )
    return out


def steps() -> dict[str, Any]:
    keys = {key for key, *_ in MEMS}
    files = dict(FILES)
    sessions = []
    for s in SESSIONS:
        turns = []
        for t in s["turns"]:
            read_here: set[str] = set()  # each turn is a new process (`opencode run`, `claude -p --resume`)
            assert t["steps"] and "answer" in t["steps"][-1], f"{s['name']}: a turn ends with an answer"
            assert all("tool_calls" in st for st in t["steps"][:-1]), f"{s['name']}: only the last step answers"
            out_steps = []
            for st in t["steps"]:
                assert set(st["relevant"]) <= keys, set(st["relevant"]) - keys
                for tc in st.get("tool_calls", []):
                    path = str(tc["args"].get("filePath", "")).removeprefix("{root}/")
                    if tc["tool"] == "read":
                        assert path in files, path
                        read_here.add(path)
                    elif tc["tool"] == "edit":
                        assert path in read_here, f"{path} edited before it was read in this turn of {s['name']}"
                        old, new = tc["args"]["oldString"], tc["args"]["newString"]
                        assert files[path].count(old) == 1, f"{path}: oldString found {files[path].count(old)} times"
                        files[path] = files[path].replace(old, new)
                if "tool_calls" in st:
                    assert set(st["uses"]) <= set(st["relevant"]), f"{s['name']}: uses beyond relevant: {st['uses']}"
                    st = {**st, "uses": [mem_id(k) for k in st["uses"]]}
                out_steps.append({**st, "relevant": [mem_id(k) for k in st["relevant"]]})
            turns.append({"user": t["user"], "steps": out_steps})
        sessions.append({"name": s["name"], "turns": turns})
    n_steps = sum(len(t["steps"]) for s in sessions for t in s["turns"])
    assert len(sessions) >= 3 and n_steps >= 20, (len(sessions), n_steps)
    return {
        "project": "kelpie",
        "about": "Scripted agent sessions for benchmarks/bench_agent_view.py; generated by build.py (edit that).",
        "sessions": sessions,
    }


def render() -> dict[str, str]:
    mems = memories()
    assert len(mems) >= 40 and len({m["id"] for m in mems}) == len(mems)
    return {
        "memories.jsonl": "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in mems),
        "project.json": json.dumps(FILES, indent=1, ensure_ascii=False) + "\n",
        "steps.json": json.dumps(steps(), indent=1, ensure_ascii=False) + "\n",
    }


def main() -> None:
    rendered = render()
    if "--check" in sys.argv:
        stale = [name for name, text in rendered.items() if (HERE / name).read_text(encoding="utf-8") != text]
        sys.exit(f"out of date (run build.py): {', '.join(stale)}" if stale else 0)
    for name, text in rendered.items():
        (HERE / name).write_text(text, encoding="utf-8")
    data = json.loads(rendered["steps.json"])
    n_turns = sum(len(s["turns"]) for s in data["sessions"])
    n_steps = sum(len(t["steps"]) for s in data["sessions"] for t in s["turns"])
    used = {i for s in data["sessions"] for t in s["turns"] for st in t["steps"] for i in st["relevant"]}
    print(
        f"{len(MEMS)} memories ({len(used)} relevant to some step), {len(data['sessions'])} sessions, {n_turns} turns, {n_steps} steps"
    )


if __name__ == "__main__":
    main()
