# ruff: noqa: E501
"""Build the agent-view judge scenario 3: memories.jsonl, project.json and steps.json.

One made-up project, `dosewise` (a Kotlin Android app that reminds patients to take their medication and keeps a
dose diary they share with their clinic: Jetpack Compose, Room, Hilt, AlarmManager, WorkManager, fastlane), with
51 memories of the kind a team records (decisions, rejected alternatives, conventions, gotchas, facts,
preferences, todos; 21 of them matter to some step, the rest are true but needed by none), the project's source
files, and five scripted sessions (27 user messages, 107 agent steps, 80 of them tool calls) whose steps are each
labelled with the memories that matter for that step; 51 of the steps (30 of them in the last session, a run of
small requests) need no memory at all. Everything here was written by hand for codememory, blind: without
reading how codememory chooses what to show.

    python benchmarks/data/agent_view_judge3/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge3/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (all start with `wren_`, none shared with the other scenarios); the file
ids are `mem_` + the first 8 hex digits of sha1("agent_view:" + key), so they stay the same when entries are
added or reordered. Tool-call arguments may hold `{root}`, which the benchmark replaces with the project's
absolute path. The build replays every scripted `edit` on the files (each edit's oldString must occur exactly
once at that point) and checks that a file is read in a turn before it is edited there (OpenCode and Claude
Code refuse to edit a file their process has not read, and each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: canScheduleExactAlarms with its
setAndAllowWhileIdle fallback, CrashReporter, DEFAULT '' in a migration, pixel6Api34StagingDebugAndroidTest,
versionCode 30500), reads or edits the file the memory points to for this task, or does what the memory
prescribes where neither the user's request nor the file being edited would have told it to. A memory the
call merely agrees with (a pattern the file already follows, a warning heeded by not doing something) is
relevant, not used. Final answers have no `uses`: use detection watches what the agent does (tool calls and
edits) and the ids it cites. These labels score use detection (bench_agent_view.py: which shown memories the
session went on to use).

This is a final judge: run it once, after the choices it judges are frozen; do not tune against it.
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
PROJECT = "dosewise"
KEY_PREFIX = "wren_"


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- reminders and alarms
    (
        "wren_exact_alarms",
        "decision",
        0.8,
        "reminders,alarms,workmanager",
        "Dose reminders are exact alarms (AlarmManager.setExactAndAllowWhileIdle in ReminderScheduler), not WorkManager jobs: in Doze, WorkManager ran reminders up to 40 minutes late, and a late dose reminder is a patient-safety bug.",
    ),
    (
        "wren_exact_permission",
        "gotcha",
        0.8,
        "reminders,alarms,android14,permissions",
        "Android 14 no longer grants SCHEDULE_EXACT_ALARM on install, and setExactAndAllowWhileIdle then throws SecurityException 'Caller app.dosewise needs to hold android.permission.SCHEDULE_EXACT_ALARM or android.permission.USE_EXACT_ALARM to set exact alarms'. ReminderScheduler must check alarmManager.canScheduleExactAlarms() (API 31+) and fall back to setAndAllowWhileIdle; the user grants the permission from Settings.ACTION_REQUEST_SCHEDULE_EXACT_ALARM.",
    ),
    (
        "wren_use_exact_alarm_rejected",
        "rejected_alternative",
        0.6,
        "reminders,permissions,play-policy",
        "Rejected declaring USE_EXACT_ALARM (granted without asking the user): Google Play allows it only for alarm-clock and calendar apps, and review rejected build 3.1.0 for it. We keep SCHEDULE_EXACT_ALARM and ask the user.",
    ),
    (
        "wren_boot_reschedule",
        "gotcha",
        0.7,
        "reminders,alarms,receiver",
        "Alarms do not survive a reboot, an app update, a clock or time-zone change, or a revoked exact-alarm permission. reminders/BootReceiver.kt calls ReminderScheduler.rescheduleAll() for the broadcasts in its manifest intent-filter; a new trigger needs both the <action> in AndroidManifest.xml and a branch in BootReceiver's `when`, which ignores actions it does not list.",
    ),
    (
        "wren_pending_intent",
        "gotcha",
        0.6,
        "reminders,alarms,pendingintent",
        "Reminder PendingIntents use FLAG_IMMUTABLE (targetSdk 31+ throws 'Targeting S+ (version 31 and above) requires that one of FLAG_IMMUTABLE or FLAG_MUTABLE be specified') and the request code reminderRequestCode(medicationId): a medication always maps to the same PendingIntent, so scheduling it again replaces its alarm instead of adding a second one.",
    ),
    (
        "wren_dose_time_zone",
        "convention",
        0.8,
        "reminders,time,dst",
        "Dose times are stored as LocalTime values plus the medication's zone (Medication.zoneId), never as epoch millis or a fixed UTC offset. NextDoseCalculator builds each day's ZonedDateTime in that zone, so 08:00 stays 08:00 across DST changes; a time in the spring-forward gap (02:30) moves to 03:30, as ZonedDateTime.of does.",
    ),
    (
        "wren_notification_channel",
        "gotcha",
        0.5,
        "notifications,reminders",
        "A notification channel's importance and sound cannot be changed once it exists on the phone: changing them for reminders means a new channel id (now dose_reminders_v2) and deleting the old channel in DosewiseApp.onCreate.",
    ),
    (
        "wren_post_notifications",
        "fact",
        0.5,
        "notifications,permissions,onboarding",
        "Android 13+ needs the runtime POST_NOTIFICATIONS permission; we ask for it in onboarding step 3 (OnboardingPermissions.kt), never at first launch: the prompt is accepted far more often once the user has added a medication.",
    ),
    (
        "wren_snooze",
        "fact",
        0.3,
        "reminders,snooze",
        "Snooze is a fixed 10 minutes (SNOOZE_MINUTES in ReminderActions.kt); product decided against a configurable snooze in 2025.",
    ),
    # --- database
    (
        "wren_room_migrations",
        "convention",
        0.8,
        "database,room,migrations",
        "Every Room schema change bumps the version in data/db/DosewiseDatabase.kt, adds a hand-written Migration to ALL_MIGRATIONS in data/db/Migrations.kt and a case in app/src/androidTest/java/app/dosewise/data/db/MigrationTest.kt, and commits the exported schema (app/schemas/app.dosewise.data.db.DosewiseDatabase/<version>.json). Never fallbackToDestructiveMigration: it would wipe the patients' dose history.",
    ),
    (
        "wren_migration_match",
        "gotcha",
        0.6,
        "database,room,migrations",
        "A migration must produce exactly the schema Room derives from the entity, and a Kotlin default (val x: String = \"\") is not a SQL default: a non-null column needs @ColumnInfo(defaultValue = ...) on the field and the same DEFAULT in ALTER TABLE ... NOT NULL, or the app fails at open with 'IllegalStateException: Migration didn't properly handle: medications'. Nullable columns need neither.",
    ),
    (
        "wren_dose_history",
        "decision",
        0.6,
        "database,history,clinic",
        "Dose history (dose_events: taken, skipped, snoozed) is append-only: a correction inserts a new row whose supersedes_id points to the old one. Clinics receive the full history, corrections included.",
    ),
    (
        "wren_dose_amount",
        "gotcha",
        0.5,
        "database,doses,units",
        'Dose amounts are stored as a decimal string plus a unit ("0.5", "tablet") and parsed with BigDecimal; as a Float, 0.1 + 0.2 ml once showed as \'0.30000000000000004 ml\' in the diary.',
    ),
    # --- architecture
    (
        "wren_hilt",
        "decision",
        0.5,
        "architecture,di,hilt",
        "Dependency injection is Hilt: classes get @Inject constructors, Android components @AndroidEntryPoint, and ViewModels @HiltViewModel.",
    ),
    (
        "wren_koin_rejected",
        "rejected_alternative",
        0.4,
        "architecture,di,koin",
        "Rejected Koin (tried in 2024): a missing binding crashed at runtime on a rarely used screen instead of failing the build, which Hilt's compile-time graph catches.",
    ),
    (
        "wren_viewmodel_state",
        "convention",
        0.6,
        "architecture,compose,viewmodel",
        "ViewModels expose one StateFlow<XxxUiState> built with stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), initial), and screens collect it with collectAsStateWithLifecycle(); no LiveData, no public MutableStateFlow.",
    ),
    (
        "wren_compose_only",
        "decision",
        0.4,
        "ui,compose",
        "New screens are Jetpack Compose only; the two legacy XML fragments (Settings, About) get bug fixes, not features.",
    ),
    (
        "wren_clock_injection",
        "convention",
        0.7,
        "time,testing,architecture",
        "Time comes from the injected java.time.Clock (Hilt provides Clock.systemDefaultZone()); no System.currentTimeMillis(), Instant.now() or LocalDate.now() without a clock. Unit tests pass Clock.fixed(...) in the zone under test.",
    ),
    # --- network and sync
    (
        "wren_serialization",
        "decision",
        0.5,
        "network,json,serialization",
        "JSON is kotlinx.serialization through Retrofit's converter (no Moshi, no Gson); the shared Json instance has ignoreUnknownKeys = true so fields the clinic portal adds later do not crash older app versions.",
    ),
    (
        "wren_r8_retrofit",
        "gotcha",
        0.5,
        "build,r8,retrofit,release",
        "With R8 full mode (android.enableR8.fullMode in gradle.properties) release builds crashed in Retrofit suspend calls with 'java.lang.Class cannot be cast to java.lang.reflect.ParameterizedType'; the keep rules for retrofit2.Response and kotlin.coroutines.Continuation in app/proguard-rules.pro fix it. Debug builds never show it: try a prodRelease build after touching the API interfaces.",
    ),
    (
        "wren_sync_worker",
        "convention",
        0.5,
        "sync,workmanager,clinic",
        "Sync with the clinic portal is SyncWorker, unique periodic work named dose-sync (every 6 h, network required), enqueued with ExistingPeriodicWorkPolicy.UPDATE: KEEP would leave the old constraints in place after an app update.",
    ),
    (
        "wren_flavors",
        "fact",
        0.5,
        "build,flavors,config",
        "Two product flavors: staging (applicationId suffix .staging, https://api.staging.dosewise.example/) and prod (https://api.dosewise.example/); the base URL reaches the code as BuildConfig.API_BASE_URL. Only prod builds go to Google Play.",
    ),
    (
        "wren_okhttp",
        "fact",
        0.3,
        "network,okhttp",
        "OkHttp in ApiClient: connect timeout 10 s, read timeout 20 s; AuthInterceptor refreshes the access token once on a 401 before giving up.",
    ),
    # --- privacy
    (
        "wren_crash_phi",
        "gotcha",
        0.8,
        "privacy,crashlytics,logging",
        'Medication names and dose amounts are health data: they never go into Crashlytics (logs, custom keys, non-fatal messages) or analytics. Report through app.dosewise.diagnostics.CrashReporter with ids only (CrashReporter.nonFatal(event, "medication_id" to id)); nothing else calls FirebaseCrashlytics directly.',
    ),
    (
        "wren_backup",
        "gotcha",
        0.4,
        "privacy,backup,tink",
        "Auto Backup excludes the Tink keyset prefs (res/xml/data_extraction_rules.xml): restored on a new phone, a keyset from another device fails with 'javax.crypto.AEADBadTagException' and the user is logged out.",
    ),
    (
        "wren_token_storage",
        "decision",
        0.4,
        "privacy,auth,datastore",
        "The clinic portal's refresh token is kept in DataStore encrypted with Tink; EncryptedSharedPreferences (androidx.security.crypto) is deprecated and not used.",
    ),
    # --- build and tooling
    (
        "wren_version_catalog",
        "convention",
        0.6,
        "build,gradle,dependencies",
        "Dependencies and plugins are declared in gradle/libs.versions.toml only and referenced as libs.*; no version strings in any build.gradle.kts.",
    ),
    (
        "wren_min_sdk_24",
        "fact",
        0.5,
        "build,minsdk,desugaring",
        "minSdk is 24 (Android 7.0): 4% of our patients are still on Nougat, so java.time comes through core library desugaring (coreLibraryDesugaring in app/build.gradle.kts).",
    ),
    (
        "wren_version_code",
        "convention",
        0.7,
        "release,versioning,build",
        "versionCode is major*10000 + minor*100 + patch (3.4.2 -> 30402), set next to versionName in app/build.gradle.kts; both change only in the release commit.",
    ),
    (
        "wren_ci",
        "convention",
        0.5,
        "ci,lint,ktlint",
        "CI (.github/workflows/ci.yml) runs ktlintCheck, detekt, lintStagingDebug and testStagingDebugUnitTest on every pull request; lint issues fail the build and app/lint-baseline.xml may only shrink.",
    ),
    (
        "wren_gmd",
        "fact",
        0.5,
        "testing,androidtest,gradle",
        "Instrumented tests (app/src/androidTest, MigrationTest among them) run on a Gradle Managed Device: ./gradlew pixel6Api34StagingDebugAndroidTest, one class with -Pandroid.testInstrumentationRunnerArguments.class=<fqcn>. CI runs them nightly, not on pull requests.",
    ),
    (
        "wren_flaky_tests",
        "convention",
        0.4,
        "testing,ci,flaky",
        "A test that fails twice on main without a code change is quarantined with @FlakyTest and a DW issue the same day; CI never retries failed tests.",
    ),
    (
        "wren_jdk17",
        "gotcha",
        0.4,
        "build,gradle,jdk",
        "The build needs JDK 17 or newer: under JDK 11 Gradle stops with 'Android Gradle plugin requires Java 17 to run. You are currently using Java 11.' Set JAVA_HOME or org.gradle.java.home in ~/.gradle/gradle.properties, never in the repository's gradle.properties.",
    ),
    (
        "wren_config_cache",
        "gotcha",
        0.4,
        "build,gradle,config",
        "The Gradle configuration cache is on (org.gradle.configuration-cache in gradle.properties): build scripts read environment variables with providers.environmentVariable(...), never System.getenv at configuration time, or a cached configuration keeps stale values.",
    ),
    (
        "wren_remote_config",
        "convention",
        0.4,
        "flags,config,firebase",
        "Feature flags come from Firebase Remote Config through the FeatureFlags interface, with in-app defaults in res/xml/remote_config_defaults.xml; no BuildConfig booleans for features.",
    ),
    (
        "wren_baseline_profile",
        "fact",
        0.3,
        "performance,startup,build",
        "The baseline profile (app/src/main/baseline-prof.txt) is generated by the :baselineprofile module on a Pixel 6; regenerate it after large UI changes. Cold start went from 1.9 s to 1.2 s with it.",
    ),
    # --- workflow and release
    (
        "wren_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commit subjects are imperative, at most 72 characters, prefixed with the area (reminders:, db:, sync:, ui:, build:, release:); a Linear issue id (DW-123) goes in the body, never in the subject.",
    ),
    (
        "wren_release_process",
        "convention",
        0.7,
        "release,play,workflow",
        "A release is one commit 'release: x.y.z' that bumps versionCode/versionName and adds the '## x.y.z (date)' section to CHANGELOG.md, then an annotated tag vx.y.z pushed to origin: the tag starts .github/workflows/release.yml, which builds and signs the prodRelease bundle and uploads it to the Play internal track. Production is a staged rollout by hand in Play Console (10%, 50%, 100% over a week).",
    ),
    (
        "wren_release_notes",
        "convention",
        0.6,
        "release,play,fastlane,i18n",
        "Play release notes are fastlane/metadata/android/<locale>/changelogs/<versionCode>.txt for en-US and nb-NO, at most 500 characters each, written for patients (no issue ids, no jargon).",
    ),
    (
        "wren_release_signing",
        "fact",
        0.4,
        "release,signing,ci",
        "Release bundles are signed in CI with the upload key from the secrets DOSEWISE_UPLOAD_KEYSTORE_B64 and DOSEWISE_UPLOAD_KEY_PASSWORD; Play App Signing holds the app signing key. Keystores are never committed or copied to laptops.",
    ),
    (
        "wren_rollout_days",
        "preference",
        0.4,
        "release,rollout,workflow",
        "No production rollout steps on Fridays or in the week before Christmas and Easter: clinics are short-staffed when problem reports come in.",
    ),
    # --- UI and text
    (
        "wren_strings",
        "convention",
        0.7,
        "ui,i18n,strings",
        "Every user-visible string goes in res/values/strings.xml and res/values-nb/strings.xml in the same change (half of our users read Norwegian); counts use <plurals>, never string concatenation.",
    ),
    (
        "wren_time_format",
        "convention",
        0.6,
        "ui,time,i18n",
        "Times shown to the user follow the phone's 12/24-hour setting and locale: every screen formats them with formatDoseTime() in ui/common/TimeText.kt (DateFormat.is24HourFormat picks H:mm or h:mm a), never with a pattern of its own.",
    ),
    (
        "wren_accessibility",
        "convention",
        0.5,
        "ui,accessibility",
        "Icon-only buttons need a contentDescription from strings.xml and tap targets are at least 48 dp: many of our patients use TalkBack or very large font sizes.",
    ),
    # --- true, but for none of the scripted steps
    (
        "wren_todo_refill",
        "todo",
        0.3,
        "reminders,refill",
        "TODO: refill reminders when fewer than 7 days of pills are left (DW-412); needs a pill count on Medication first.",
    ),
    (
        "wren_wear_rejected",
        "rejected_alternative",
        0.3,
        "wear,notifications",
        "Rejected a Wear OS companion app for now (2025): under 2% of patients have a watch, and reminder notifications already bridge to watches.",
    ),
    (
        "wren_glance_widget",
        "fact",
        0.3,
        "widget,glance",
        "The home-screen widget (next dose) is built with Glance and refreshed by ReminderReceiver after each dose; its updatePeriodMillis is 0.",
    ),
    (
        "wren_deep_links",
        "fact",
        0.3,
        "links,deploy",
        "Deep links: dosewise://medication/{id} and https://dosewise.example/m/{id} (App Links verified through assetlinks.json, which the web team deploys).",
    ),
    (
        "wren_todo_target35",
        "todo",
        0.4,
        "build,targetsdk,play",
        "TODO: targetSdk 35 before Play's August deadline; edge-to-edge becomes mandatory then, and MainActivity's window insets need handling first.",
    ),
    (
        "wren_min_sdk_26",
        "decision",
        0.6,
        "build,minsdk,desugaring",
        "minSdk went from 24 to 26 (Android 8.0) in release 3.2, once Nougat fell under 1% of patients: java.time and notification channels are native now, and core library desugaring is only left in app/build.gradle.kts until DW-388 removes it (nothing needs it any more).",
    ),
    (
        "wren_test_devices",
        "fact",
        0.3,
        "testing,devices",
        "The team's test phones (a Pixel 6, a Samsung A52 and a Nokia 5.3) are in the Oslo office drawer; book them in the #devices channel before taking one home.",
    ),
]

# ------------------------------------------------------------------------------------------ project
KT = "app/src/main/java/app/dosewise/"
FILES: dict[str, str] = {
    "README.md": """# dosewise

Android app that sends medication remidners and keeps a dose diary patients can share with their clinic.

- `app/`: the app module (Kotlin, Jetpack Compose, Room, Hilt)
- build: `./gradlew :app:assembleStagingDebug`
- unit tests: `./gradlew testStagingDebugUnitTest`
- formatting: `./gradlew ktlintFormat` (CI runs `ktlintCheck`)
- `fastlane/`: Play Store metadata
""",
    ".gitignore": """*.iml
.gradle/
/local.properties
.idea/
build/
/captures
*.jks
*.keystore
""",
    "settings.gradle.kts": """pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "dosewise"
include(":app")
""",
    "gradle.properties": """org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8
org.gradle.configuration-cache=true
org.gradle.caching=true
android.useAndroidX=true
android.nonTransitiveRClass=true
android.enableR8.fullMode=true
kotlin.code.style=official
""",
    "gradle/libs.versions.toml": """[versions]
agp = "8.5.2"
kotlin = "2.0.20"
ksp = "2.0.20-1.0.25"
compose-bom = "2024.09.02"
room = "2.6.1"
hilt = "2.52"
work = "2.9.1"
retrofit = "2.11.0"
kotlinx-serialization = "1.7.3"
desugar = "2.1.2"
ktlint = "12.1.1"

[libraries]
compose-bom = { group = "androidx.compose", name = "compose-bom", version.ref = "compose-bom" }
compose-material3 = { group = "androidx.compose.material3", name = "material3" }
lifecycle-runtime-compose = { group = "androidx.lifecycle", name = "lifecycle-runtime-compose", version = "2.8.6" }
room-runtime = { group = "androidx.room", name = "room-runtime", version.ref = "room" }
room-ktx = { group = "androidx.room", name = "room-ktx", version.ref = "room" }
room-compiler = { group = "androidx.room", name = "room-compiler", version.ref = "room" }
room-testing = { group = "androidx.room", name = "room-testing", version.ref = "room" }
hilt-android = { group = "com.google.dagger", name = "hilt-android", version.ref = "hilt" }
hilt-compiler = { group = "com.google.dagger", name = "hilt-compiler", version.ref = "hilt" }
work-runtime = { group = "androidx.work", name = "work-runtime-ktx", version.ref = "work" }
retrofit = { group = "com.squareup.retrofit2", name = "retrofit", version.ref = "retrofit" }
kotlinx-serialization-json = { group = "org.jetbrains.kotlinx", name = "kotlinx-serialization-json", version.ref = "kotlinx-serialization" }
desugar-jdk-libs = { group = "com.android.tools", name = "desugar_jdk_libs", version.ref = "desugar" }
junit = { group = "junit", name = "junit", version = "4.13.2" }
truth = { group = "com.google.truth", name = "truth", version = "1.4.4" }

[plugins]
android-application = { id = "com.android.application", version.ref = "agp" }
kotlin-android = { id = "org.jetbrains.kotlin.android", version.ref = "kotlin" }
kotlin-compose = { id = "org.jetbrains.kotlin.plugin.compose", version.ref = "kotlin" }
kotlin-serialization = { id = "org.jetbrains.kotlin.plugin.serialization", version.ref = "kotlin" }
ksp = { id = "com.google.devtools.ksp", version.ref = "ksp" }
hilt = { id = "com.google.dagger.hilt.android", version.ref = "hilt" }
ktlint = { id = "org.jlleitschuh.gradle.ktlint", version.ref = "ktlint" }
""",
    "app/build.gradle.kts": """plugins {
    alias(libs.plugins.android.application)
    alias(libs.plugins.kotlin.android)
    alias(libs.plugins.kotlin.compose)
    alias(libs.plugins.kotlin.serialization)
    alias(libs.plugins.ksp)
    alias(libs.plugins.hilt)
    alias(libs.plugins.ktlint)
}

android {
    namespace = "app.dosewise"
    compileSdk = 34

    defaultConfig {
        applicationId = "app.dosewise"
        minSdk = 26
        targetSdk = 34
        versionCode = 30402
        versionName = "3.4.2"
        testInstrumentationRunner = "app.dosewise.HiltTestRunner"
    }

    flavorDimensions += "env"
    productFlavors {
        create("staging") {
            dimension = "env"
            applicationIdSuffix = ".staging"
            buildConfigField("String", "API_BASE_URL", "\\"https://api.staging.dosewise.example/\\"")
        }
        create("prod") {
            dimension = "env"
            buildConfigField("String", "API_BASE_URL", "\\"https://api.dosewise.example/\\"")
        }
    }

    buildTypes {
        release {
            isMinifyEnabled = true
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
        }
    }

    compileOptions {
        isCoreLibraryDesugaringEnabled = true
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions {
        jvmTarget = "17"
    }
    buildFeatures {
        compose = true
        buildConfig = true
    }
    testOptions {
        managedDevices {
            localDevices {
                create("pixel6Api34") {
                    device = "Pixel 6"
                    apiLevel = 34
                    systemImageSource = "aosp-atd"
                }
            }
        }
    }
}

ksp {
    arg("room.schemaLocation", "$projectDir/schemas")
}

dependencies {
    coreLibraryDesugaring(libs.desugar.jdk.libs)
    implementation(platform(libs.compose.bom))
    implementation(libs.compose.material3)
    implementation(libs.lifecycle.runtime.compose)
    implementation(libs.room.runtime)
    implementation(libs.room.ktx)
    ksp(libs.room.compiler)
    implementation(libs.hilt.android)
    ksp(libs.hilt.compiler)
    implementation(libs.work.runtime)
    implementation(libs.retrofit)
    implementation(libs.kotlinx.serialization.json)
    testImplementation(libs.junit)
    testImplementation(libs.truth)
    androidTestImplementation(libs.room.testing)
}
""",
    "app/proguard-rules.pro": """# Retrofit suspend functions under R8 full mode
-keep,allowobfuscation,allowshrinking interface retrofit2.Call
-keep,allowobfuscation,allowshrinking class retrofit2.Response
-keep,allowobfuscation,allowshrinking class kotlin.coroutines.Continuation
""",
    "CHANGELOG.md": """# Changelog

## 3.4.2 (2026-10-14)
- Fixed: the dose diary export left out doses recorded while the phone was offline.

## 3.4.1 (2026-09-30)
- Fixed: reminders for a medication added offline were only scheduled once the app was opened again.

## 3.4.0 (2026-09-16)
- Added: corrections to the dose history are sent to the clinic.
- Changed: the Today screen groups doses by morning, midday and evening.
""",
    "fastlane/metadata/android/en-US/changelogs/30402.txt": """Doses you record while offline now show up in the diary export.
""",
    "fastlane/metadata/android/nb-NO/changelogs/30402.txt": """Doser du registrerer uten nett, kommer nå med i eksporten av dagboken.
""",
    ".github/workflows/ci.yml": """name: ci
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-java@v4
        with:
          distribution: temurin
          java-version: 17
      - uses: gradle/actions/setup-gradle@v4
      - run: ./gradlew ktlintCheck detekt lintStagingDebug testStagingDebugUnitTest
""",
    ".github/workflows/release.yml": """name: release
on:
  push:
    tags: ["v*"]
jobs:
  internal:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-java@v4
        with:
          distribution: temurin
          java-version: 17
      - uses: gradle/actions/setup-gradle@v4
      - run: echo "$DOSEWISE_UPLOAD_KEYSTORE_B64" | base64 -d > upload.jks
        env:
          DOSEWISE_UPLOAD_KEYSTORE_B64: ${{ secrets.DOSEWISE_UPLOAD_KEYSTORE_B64 }}
      - run: ./gradlew bundleProdRelease
      - run: bundle exec fastlane supply --track internal --aab app/build/outputs/bundle/prodRelease/app-prod-release.aab
""",
    "app/src/main/AndroidManifest.xml": """<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android">

    <uses-permission android:name="android.permission.INTERNET" />
    <uses-permission android:name="android.permission.POST_NOTIFICATIONS" />
    <uses-permission android:name="android.permission.SCHEDULE_EXACT_ALARM" />
    <uses-permission android:name="android.permission.RECEIVE_BOOT_COMPLETED" />

    <application
        android:name=".DosewiseApp"
        android:allowBackup="true"
        android:dataExtractionRules="@xml/data_extraction_rules"
        android:icon="@mipmap/ic_launcher"
        android:label="@string/app_name"
        android:theme="@style/Theme.Dosewise">
        <activity
            android:name=".MainActivity"
            android:exported="true">
            <intent-filter>
                <action android:name="android.intent.action.MAIN" />
                <category android:name="android.intent.category.LAUNCHER" />
            </intent-filter>
        </activity>
        <receiver
            android:name=".reminders.ReminderReceiver"
            android:exported="false" />
        <receiver
            android:name=".reminders.BootReceiver"
            android:exported="true">
            <intent-filter>
                <action android:name="android.intent.action.BOOT_COMPLETED" />
                <action android:name="android.intent.action.MY_PACKAGE_REPLACED" />
                <action android:name="android.intent.action.TIMEZONE_CHANGED" />
                <action android:name="android.intent.action.TIME_SET" />
            </intent-filter>
        </receiver>
    </application>
</manifest>
""",
    "app/src/main/res/values/strings.xml": """<resources>
    <string name="app_name">Dosewise</string>
    <string name="today_title">Today</string>
    <string name="mark_taken">Mark as taken</string>
    <plurals name="doses_left">
        <item quantity="one">%d dose left today</item>
        <item quantity="other">%d doses left today</item>
    </plurals>
</resources>
""",
    "app/src/main/res/values-nb/strings.xml": """<resources>
    <string name="today_title">I dag</string>
    <string name="mark_taken">Merk som tatt</string>
    <plurals name="doses_left">
        <item quantity="one">%d dose igjen i dag</item>
        <item quantity="other">%d doser igjen i dag</item>
    </plurals>
</resources>
""",
    KT + "DosewiseApp.kt": """package app.dosewise

import android.app.Application
import android.app.NotificationChannel
import android.app.NotificationManager
import app.dosewise.reminders.REMINDER_CHANNEL_ID
import dagger.hilt.android.HiltAndroidApp

@HiltAndroidApp
class DosewiseApp : Application() {
    override fun onCreate() {
        super.onCreate()
        val notifications = getSystemService(NotificationManager::class.java)
        notifications.deleteNotificationChannel("dose_reminders")
        notifications.createNotificationChannel(
            NotificationChannel(REMINDER_CHANNEL_ID, getString(R.string.app_name), NotificationManager.IMPORTANCE_HIGH),
        )
    }
}
""",
    KT + "reminders/ReminderNotifications.kt": """package app.dosewise.reminders

import android.app.Notification
import android.content.Context
import androidx.core.app.NotificationCompat
import app.dosewise.R
import app.dosewise.data.db.Medication

const val REMINDER_CHANNEL_ID = "dose_reminders_v2"

fun reminderNotification(context: Context, medication: Medication): Notification =
    NotificationCompat.Builder(context, REMINDER_CHANNEL_ID)
        .setSmallIcon(R.drawable.ic_pill)
        .setContentTitle(medication.name)
        .setContentText("${medication.doseAmount} ${medication.doseUnit}")
        .setCategory(NotificationCompat.CATEGORY_REMINDER)
        .setPriority(NotificationCompat.PRIORITY_HIGH)
        .build()
""",
    KT + "data/db/Entities.kt": """package app.dosewise.data.db

import androidx.room.ColumnInfo
import androidx.room.Entity
import androidx.room.Index
import androidx.room.PrimaryKey
import java.time.Instant
import java.time.LocalTime

@Entity(tableName = "medications")
data class Medication(
    @PrimaryKey(autoGenerate = true) val id: Long = 0,
    val name: String,
    @ColumnInfo(name = "dose_amount") val doseAmount: String,
    @ColumnInfo(name = "dose_unit") val doseUnit: String,
    @ColumnInfo(name = "dose_times") val doseTimes: List<LocalTime>,
    @ColumnInfo(name = "zone_id") val zoneId: String,
    @ColumnInfo(defaultValue = "1") val active: Boolean = true,
)

@Entity(tableName = "dose_events", indices = [Index("medication_id")])
data class DoseEvent(
    @PrimaryKey(autoGenerate = true) val id: Long = 0,
    @ColumnInfo(name = "medication_id") val medicationId: Long,
    @ColumnInfo(name = "scheduled_at") val scheduledAt: Instant,
    val status: String, // taken, skipped, snoozed
    @ColumnInfo(name = "recorded_at") val recordedAt: Instant,
    @ColumnInfo(name = "supersedes_id") val supersedesId: Long? = null,
)
""",
    KT + "data/db/DosewiseDatabase.kt": """package app.dosewise.data.db

import android.content.Context
import androidx.room.Database
import androidx.room.Room
import androidx.room.RoomDatabase
import androidx.room.TypeConverters

@Database(entities = [Medication::class, DoseEvent::class], version = 7, exportSchema = true)
@TypeConverters(Converters::class)
abstract class DosewiseDatabase : RoomDatabase() {
    abstract fun medications(): MedicationDao

    abstract fun doseEvents(): DoseEventDao

    companion object {
        fun build(context: Context): DosewiseDatabase =
            Room.databaseBuilder(context, DosewiseDatabase::class.java, "dosewise.db")
                .addMigrations(*ALL_MIGRATIONS)
                .build()
    }
}
""",
    KT + "data/db/Migrations.kt": """package app.dosewise.data.db

import androidx.room.migration.Migration
import androidx.sqlite.db.SupportSQLiteDatabase

val MIGRATION_5_6 =
    object : Migration(5, 6) {
        override fun migrate(db: SupportSQLiteDatabase) {
            db.execSQL("ALTER TABLE medications ADD COLUMN active INTEGER NOT NULL DEFAULT 1")
        }
    }

val MIGRATION_6_7 =
    object : Migration(6, 7) {
        override fun migrate(db: SupportSQLiteDatabase) {
            db.execSQL("ALTER TABLE dose_events ADD COLUMN supersedes_id INTEGER")
        }
    }

val ALL_MIGRATIONS = LEGACY_MIGRATIONS + arrayOf(MIGRATION_5_6, MIGRATION_6_7)
""",
    KT + "data/db/MedicationDao.kt": """package app.dosewise.data.db

import androidx.room.Dao
import androidx.room.Query
import androidx.room.Upsert
import kotlinx.coroutines.flow.Flow

@Dao
interface MedicationDao {
    @Query("SELECT * FROM medications WHERE active = 1 ORDER BY name")
    fun observeActive(): Flow<List<Medication>>

    @Query("SELECT * FROM medications WHERE active = 1")
    suspend fun active(): List<Medication>

    @Upsert
    suspend fun upsert(medication: Medication): Long
}
""",
    KT + "reminders/ReminderScheduler.kt": """package app.dosewise.reminders

import android.app.AlarmManager
import android.app.PendingIntent
import android.content.Context
import android.content.Intent
import app.dosewise.data.db.Medication
import app.dosewise.data.db.MedicationDao
import dagger.hilt.android.qualifiers.ApplicationContext
import javax.inject.Inject
import javax.inject.Singleton

@Singleton
class ReminderScheduler @Inject constructor(
    @ApplicationContext private val context: Context,
    private val calculator: NextDoseCalculator,
    private val medications: MedicationDao,
) {
    private val alarmManager = context.getSystemService(AlarmManager::class.java)

    fun schedule(medication: Medication) {
        val next = calculator.nextDose(medication) ?: return
        alarmManager.setExactAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, next.toEpochMilli(), pendingIntent(medication.id))
    }

    fun cancel(medicationId: Long) {
        alarmManager.cancel(pendingIntent(medicationId))
    }

    suspend fun rescheduleAll() {
        medications.active().forEach(::schedule)
    }

    private fun pendingIntent(medicationId: Long): PendingIntent =
        PendingIntent.getBroadcast(
            context,
            reminderRequestCode(medicationId),
            Intent(context, ReminderReceiver::class.java).putExtra(EXTRA_MEDICATION_ID, medicationId),
            PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )

    companion object {
        const val EXTRA_MEDICATION_ID = "medication_id"
    }
}

internal fun reminderRequestCode(medicationId: Long): Int = (medicationId xor (medicationId ushr 32)).toInt()
""",
    KT + "reminders/BootReceiver.kt": """package app.dosewise.reminders

import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import dagger.hilt.android.AndroidEntryPoint
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import javax.inject.Inject

/** Alarms are gone after a reboot, an update or a clock change: put them back. */
@AndroidEntryPoint
class BootReceiver : BroadcastReceiver() {
    @Inject lateinit var scheduler: ReminderScheduler

    override fun onReceive(context: Context, intent: Intent) {
        when (intent.action) {
            Intent.ACTION_BOOT_COMPLETED,
            Intent.ACTION_MY_PACKAGE_REPLACED,
            Intent.ACTION_TIMEZONE_CHANGED,
            Intent.ACTION_TIME_CHANGED,
            -> reschedule()
            else -> return
        }
    }

    private fun reschedule() {
        val pending = goAsync()
        CoroutineScope(Dispatchers.Default).launch {
            try {
                scheduler.rescheduleAll()
            } finally {
                pending.finish()
            }
        }
    }
}
""",
    KT + "reminders/NextDoseCalculator.kt": """package app.dosewise.reminders

import app.dosewise.data.db.Medication
import java.time.Clock
import java.time.Instant
import java.time.ZoneId
import javax.inject.Inject

class NextDoseCalculator @Inject constructor(private val clock: Clock) {
    /** The first of [medication]'s dose times after now, or null when it is paused. */
    fun nextDose(medication: Medication): Instant? {
        if (!medication.active) return null
        val now = clock.instant()
        val offset = ZoneId.of(medication.zoneId).rules.getOffset(now)
        val today = now.atOffset(offset).toLocalDate()
        return listOf(today, today.plusDays(1))
            .flatMap { day -> medication.doseTimes.map { time -> day.atTime(time).toInstant(offset) } }
            .filter { it.isAfter(now) }
            .minOrNull()
    }
}
""",
    KT + "diagnostics/CrashReporter.kt": """package app.dosewise.diagnostics

import com.google.firebase.crashlytics.FirebaseCrashlytics
import javax.inject.Inject
import javax.inject.Singleton

/** The app's only door to Crashlytics. */
@Singleton
class CrashReporter @Inject constructor() {
    fun nonFatal(event: String, vararg ids: Pair<String, Long>) {
        val crashlytics = FirebaseCrashlytics.getInstance()
        ids.forEach { (key, value) -> crashlytics.setCustomKey(key, value) }
        crashlytics.recordException(NonFatal(event))
    }
}

private class NonFatal(event: String) : Exception(event)
""",
    KT + "ui/common/TimeText.kt": """package app.dosewise.ui.common

import android.text.format.DateFormat
import androidx.compose.runtime.Composable
import androidx.compose.ui.platform.LocalConfiguration
import androidx.compose.ui.platform.LocalContext
import java.time.LocalTime
import java.time.format.DateTimeFormatter

/** A dose time as the user expects to read it: the phone's 12/24-hour setting, the user's locale. */
@Composable
fun formatDoseTime(time: LocalTime): String {
    val pattern = if (DateFormat.is24HourFormat(LocalContext.current)) "H:mm" else "h:mm a"
    return time.format(DateTimeFormatter.ofPattern(pattern, LocalConfiguration.current.locales[0]))
}
""",
    KT + "ui/today/TodayViewModel.kt": """package app.dosewise.ui.today

import androidx.lifecycle.ViewModel
import androidx.lifecycle.viewModelScope
import app.dosewise.data.DoseEventRepository
import app.dosewise.data.db.Medication
import app.dosewise.data.db.MedicationDao
import dagger.hilt.android.lifecycle.HiltViewModel
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.launch
import java.time.Clock
import java.time.LocalTime
import javax.inject.Inject

data class DoseRow(val medication: Medication, val time: LocalTime)

data class TodayUiState(val doses: List<DoseRow> = emptyList())

@HiltViewModel
class TodayViewModel @Inject constructor(
    medications: MedicationDao,
    private val doseEvents: DoseEventRepository,
    private val clock: Clock,
) : ViewModel() {
    val uiState: StateFlow<TodayUiState> =
        medications.observeActive()
            .map { meds -> TodayUiState(doses = meds.flatMap { med -> med.doseTimes.map { DoseRow(med, it) } }.sortedBy { it.time }) }
            .stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), TodayUiState())

    fun onTaken(m: Medication) {
        viewModelScope.launch { doseEvents.recordTaken(m.id, clock.instant()) }
    }
}
""",
    KT + "ui/today/TodayScreen.kt": """package app.dosewise.ui.today

import androidx.compose.foundation.layout.PaddingValues
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.items
import androidx.compose.material.icons.Icons
import androidx.compose.material.icons.filled.Check
import androidx.compose.material3.Icon
import androidx.compose.material3.IconButton
import androidx.compose.material3.ListItem
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import androidx.hilt.navigation.compose.hiltViewModel
import androidx.lifecycle.compose.collectAsStateWithLifecycle
import app.dosewise.R
import java.time.format.DateTimeFormatter
import java.util.Locale

@Composable
fun TodayScreen(viewModel: TodayViewModel = hiltViewModel()) {
    val state by viewModel.uiState.collectAsStateWithLifecycle()
    LazyColumn(contentPadding = PaddingValues(16.dp)) {
        items(state.doses, key = { "${it.medication.id}@${it.time}" }) { row ->
            DoseRowItem(row, onTaken = { viewModel.onTaken(row.medication) })
        }
    }
}

@Composable
private fun DoseRowItem(row: DoseRow, onTaken: () -> Unit) {
    ListItem(
        headlineContent = { Text(row.medication.name) },
        supportingContent = { Text("${row.medication.doseAmount} ${row.medication.doseUnit}") },
        leadingContent = { Text(row.time.format(DateTimeFormatter.ofPattern("h:mm a", Locale.US))) },
        trailingContent = {
            IconButton(onClick = onTaken) {
                Icon(Icons.Default.Check, contentDescription = stringResource(R.string.mark_taken))
            }
        },
    )
}
""",
    "app/src/test/java/app/dosewise/reminders/NextDoseCalculatorTest.kt": """package app.dosewise.reminders

import app.dosewise.data.db.Medication
import com.google.common.truth.Truth.assertThat
import org.junit.Test
import java.time.Clock
import java.time.LocalTime
import java.time.ZoneId
import java.time.ZonedDateTime

class NextDoseCalculatorTest {
    private fun medication(vararg times: LocalTime) =
        Medication(id = 1, name = "Levaxin", doseAmount = "1", doseUnit = "tablet", doseTimes = times.toList(), zoneId = OSLO.id)

    private fun at(text: String) = Clock.fixed(ZonedDateTime.parse(text).toInstant(), OSLO)

    private fun instant(text: String) = ZonedDateTime.parse(text).toInstant()

    @Test
    fun picksTheNextTimeToday() {
        val next = NextDoseCalculator(at("2026-06-10T07:00+02:00[Europe/Oslo]")).nextDose(medication(LocalTime.of(8, 0), LocalTime.of(20, 0)))
        assertThat(next).isEqualTo(instant("2026-06-10T08:00+02:00[Europe/Oslo]"))
    }

    @Test
    fun pausedMedicationHasNoNextDose() {
        val paused = medication(LocalTime.of(8, 0)).copy(active = false)
        assertThat(NextDoseCalculator(at("2026-06-10T07:00+02:00[Europe/Oslo]")).nextDose(paused)).isNull()
    }

    private companion object {
        val OSLO: ZoneId = ZoneId.of("Europe/Oslo")
    }
}
""",
    "app/src/androidTest/java/app/dosewise/data/db/MigrationTest.kt": """package app.dosewise.data.db

import androidx.room.testing.MigrationTestHelper
import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import com.google.common.truth.Truth.assertThat
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith

@RunWith(AndroidJUnit4::class)
class MigrationTest {
    @get:Rule
    val helper = MigrationTestHelper(InstrumentationRegistry.getInstrumentation(), DosewiseDatabase::class.java)

    @Test
    fun migrate6To7KeepsDoseEvents() {
        helper.createDatabase(DB, 6).use { db ->
            db.execSQL("INSERT INTO dose_events (id, medication_id, scheduled_at, status, recorded_at) VALUES (1, 1, 0, 'taken', 0)")
        }
        helper.runMigrationsAndValidate(DB, 7, true, MIGRATION_6_7).use { db ->
            db.query("SELECT supersedes_id FROM dose_events WHERE id = 1").use { cursor ->
                assertThat(cursor.moveToFirst()).isTrue()
                assertThat(cursor.isNull(0)).isTrue()
            }
        }
    }

    private companion object {
        const val DB = "migration-test"
    }
}
""",
}

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


# Session 1: the Android 14 exact-alarm crash, then rescheduling once the permission is granted, then a commit.
session("exact-alarm-crash")
user(
    "Crashlytics shows a crash on Android 14 when a reminder is scheduled: SecurityException: Caller app.dosewise "
    "needs to hold android.permission.SCHEDULE_EXACT_ALARM or android.permission.USE_EXACT_ALARM to set exact alarms. "
    "Fix it, and report a non-fatal when we have to fall back so we can see how many users are affected."
)
bash("git status", "Check the working tree", note="routine: start of a task")
read(
    KT + "reminders/ReminderScheduler.kt",
    "wren_exact_permission",
    "wren_exact_alarms",
    "wren_use_exact_alarm_rejected",
    "wren_pending_intent",
    note="the scheduler the gotcha names",
    uses=("wren_exact_permission",),
)
read(
    KT + "diagnostics/CrashReporter.kt",
    "wren_crash_phi",
    note="the only way to Crashlytics",
    uses=("wren_crash_phi",),
)
edit(
    KT + "reminders/ReminderScheduler.kt",
    """import android.content.Intent
import app.dosewise.data.db.Medication
import app.dosewise.data.db.MedicationDao
import dagger.hilt.android.qualifiers.ApplicationContext
import javax.inject.Inject
import javax.inject.Singleton

@Singleton
class ReminderScheduler @Inject constructor(
    @ApplicationContext private val context: Context,
    private val calculator: NextDoseCalculator,
    private val medications: MedicationDao,
) {
    private val alarmManager = context.getSystemService(AlarmManager::class.java)

    fun schedule(medication: Medication) {
        val next = calculator.nextDose(medication) ?: return
        alarmManager.setExactAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, next.toEpochMilli(), pendingIntent(medication.id))
    }
""",
    """import android.content.Intent
import android.os.Build
import app.dosewise.data.db.Medication
import app.dosewise.data.db.MedicationDao
import app.dosewise.diagnostics.CrashReporter
import dagger.hilt.android.qualifiers.ApplicationContext
import javax.inject.Inject
import javax.inject.Singleton

@Singleton
class ReminderScheduler @Inject constructor(
    @ApplicationContext private val context: Context,
    private val calculator: NextDoseCalculator,
    private val medications: MedicationDao,
    private val crashReporter: CrashReporter,
) {
    private val alarmManager = context.getSystemService(AlarmManager::class.java)

    /** Android 12+ may deny exact alarms; Android 14 does on a fresh install until the user allows them. */
    fun exactAlarmsAllowed(): Boolean = Build.VERSION.SDK_INT < Build.VERSION_CODES.S || alarmManager.canScheduleExactAlarms()

    fun schedule(medication: Medication) {
        val next = calculator.nextDose(medication) ?: return
        val operation = pendingIntent(medication.id)
        if (exactAlarmsAllowed()) {
            alarmManager.setExactAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, next.toEpochMilli(), operation)
        } else {
            alarmManager.setAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, next.toEpochMilli(), operation)
            crashReporter.nonFatal("exact_alarm_denied", "medication_id" to medication.id)
        }
    }
""",
    "wren_exact_permission",
    "wren_exact_alarms",
    "wren_pending_intent",
    "wren_crash_phi",
    note="check the permission, fall back to an inexact alarm, report the fallback with the id only",
    uses=("wren_exact_permission", "wren_crash_phi"),
)
bash("./gradlew :app:compileStagingDebugKotlin", "Compile the app", note="routine: build")
bash("./gradlew testStagingDebugUnitTest", "Run the unit tests", note="routine: unit tests")
answer(
    "ReminderScheduler now checks canScheduleExactAlarms() (Android 12+) before setting an exact alarm; without the "
    "permission it sets an inexact setAndAllowWhileIdle alarm on the same PendingIntent and reports an "
    "`exact_alarm_denied` non-fatal through CrashReporter with the medication id only. I did not add USE_EXACT_ALARM: "
    "Play only allows it for alarm-clock and calendar apps. Users can grant exact alarms from the system setting "
    "(Settings.ACTION_REQUEST_SCHEDULE_EXACT_ALARM).",
    "wren_exact_permission",
    "wren_exact_alarms",
    "wren_use_exact_alarm_rejected",
    "wren_crash_phi",
)
user("When a user grants the permission later, the reminders should become exact right away, not at the next reboot.")
read(
    KT + "reminders/BootReceiver.kt",
    "wren_boot_reschedule",
    "wren_pending_intent",
    note="the receiver that reschedules",
    uses=("wren_boot_reschedule",),
)
edit(
    KT + "reminders/BootReceiver.kt",
    """import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import dagger.hilt.android.AndroidEntryPoint
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import javax.inject.Inject

/** Alarms are gone after a reboot, an update or a clock change: put them back. */
@AndroidEntryPoint
class BootReceiver : BroadcastReceiver() {
    @Inject lateinit var scheduler: ReminderScheduler

    override fun onReceive(context: Context, intent: Intent) {
        when (intent.action) {
            Intent.ACTION_BOOT_COMPLETED,
            Intent.ACTION_MY_PACKAGE_REPLACED,
            Intent.ACTION_TIMEZONE_CHANGED,
            Intent.ACTION_TIME_CHANGED,
            -> reschedule()
""",
    """import android.app.AlarmManager
import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import dagger.hilt.android.AndroidEntryPoint
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import javax.inject.Inject

/** Alarms are gone after a reboot, an update or a clock change, and inexact once exact alarms are allowed: put them back. */
@AndroidEntryPoint
class BootReceiver : BroadcastReceiver() {
    @Inject lateinit var scheduler: ReminderScheduler

    override fun onReceive(context: Context, intent: Intent) {
        when (intent.action) {
            Intent.ACTION_BOOT_COMPLETED,
            Intent.ACTION_MY_PACKAGE_REPLACED,
            Intent.ACTION_TIMEZONE_CHANGED,
            Intent.ACTION_TIME_CHANGED,
            AlarmManager.ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED,
            -> reschedule()
""",
    "wren_boot_reschedule",
    "wren_pending_intent",
    note="a branch for the permission broadcast",
    uses=("wren_boot_reschedule",),
)
read(
    "app/src/main/AndroidManifest.xml",
    "wren_boot_reschedule",
    note="the receiver's intent-filter",
    uses=("wren_boot_reschedule",),
)
edit(
    "app/src/main/AndroidManifest.xml",
    """                <action android:name="android.intent.action.TIME_SET" />
""",
    """                <action android:name="android.intent.action.TIME_SET" />
                <action android:name="android.app.action.SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED" />
""",
    "wren_boot_reschedule",
    note="register the broadcast",
    uses=("wren_boot_reschedule",),
)
bash("git diff app/src/main/AndroidManifest.xml", "Review the manifest change", note="routine: review a diff")
bash("./gradlew :app:compileStagingDebugKotlin", "Compile the app", note="routine: build")
answer(
    "BootReceiver now also handles ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED (registered in the manifest "
    "intent-filter as well) and calls rescheduleAll(). Each medication keeps its request code, so the exact alarm "
    "replaces the inexact one instead of adding a second reminder.",
    "wren_boot_reschedule",
    "wren_pending_intent",
)
user("Commit it.")
bash("git diff --stat", "See what changed", note="routine: before a commit")
bash(
    "git add app/src/main && git commit -q -m 'reminders: fall back to inexact alarms without exact-alarm access' && git log --oneline -1",
    "Commit the fix",
    "wren_commit_style",
    "wren_ci",
    note="commit",
    uses=("wren_commit_style",),
)
answer("Committed as `reminders: fall back to inexact alarms without exact-alarm access`.", "wren_commit_style")
user(
    "Patients sleep through the reminder. Make the reminder notification use the alarm sound; don't commit this one "
    "yet, I want to try it on my phone first."
)
read(
    KT + "DosewiseApp.kt",
    "wren_notification_channel",
    note="where the channel is created (the gotcha names DosewiseApp.onCreate)",
    uses=("wren_notification_channel",),
)
read(KT + "reminders/ReminderNotifications.kt", "wren_notification_channel", note="the channel id")
edit(
    KT + "reminders/ReminderNotifications.kt",
    'const val REMINDER_CHANNEL_ID = "dose_reminders_v2"',
    'const val REMINDER_CHANNEL_ID = "dose_reminders_v3"',
    "wren_notification_channel",
    note="a new channel: the sound of an existing one cannot change",
    uses=("wren_notification_channel",),
)
edit(
    KT + "DosewiseApp.kt",
    """import android.app.NotificationManager
import app.dosewise.reminders.REMINDER_CHANNEL_ID
import dagger.hilt.android.HiltAndroidApp

@HiltAndroidApp
class DosewiseApp : Application() {
    override fun onCreate() {
        super.onCreate()
        val notifications = getSystemService(NotificationManager::class.java)
        notifications.deleteNotificationChannel("dose_reminders")
        notifications.createNotificationChannel(
            NotificationChannel(REMINDER_CHANNEL_ID, getString(R.string.app_name), NotificationManager.IMPORTANCE_HIGH),
        )
    }
""",
    """import android.app.NotificationManager
import android.media.AudioAttributes
import android.media.RingtoneManager
import app.dosewise.reminders.REMINDER_CHANNEL_ID
import dagger.hilt.android.HiltAndroidApp

@HiltAndroidApp
class DosewiseApp : Application() {
    override fun onCreate() {
        super.onCreate()
        val notifications = getSystemService(NotificationManager::class.java)
        listOf("dose_reminders", "dose_reminders_v2").forEach(notifications::deleteNotificationChannel)
        val channel = NotificationChannel(REMINDER_CHANNEL_ID, getString(R.string.app_name), NotificationManager.IMPORTANCE_HIGH)
        channel.setSound(
            RingtoneManager.getDefaultUri(RingtoneManager.TYPE_ALARM),
            AudioAttributes.Builder().setUsage(AudioAttributes.USAGE_ALARM).build(),
        )
        notifications.createNotificationChannel(channel)
    }
""",
    "wren_notification_channel",
    note="delete the v2 channel, create v3 with the alarm sound",
    uses=("wren_notification_channel",),
)
answer(
    "Reminders now go to a new channel, dose_reminders_v3, created with the alarm sound (USAGE_ALARM); the v2 "
    "channel is deleted at startup, since Android keeps an existing channel's sound whatever the app asks. Not "
    "committed: DosewiseApp.kt and ReminderNotifications.kt are ready for you to try.",
    "wren_notification_channel",
)

# Session 2: a new column, with its migration, test and schema.
session("medication-notes")
user(
    "Patients want to keep a note per medication (e.g. 'take with food'). Add a `notes` column to medications, "
    "empty by default and never null; the UI comes later."
)
bash("git status", "Check the working tree", note="routine: start of a task")
bash("ls " + KT + "data/db", "List the database package", note="routine: look around")
read(
    KT + "data/db/Entities.kt",
    "wren_room_migrations",
    "wren_migration_match",
    note="the entity",
)
edit(
    KT + "data/db/Entities.kt",
    """    @ColumnInfo(defaultValue = "1") val active: Boolean = true,
)
""",
    """    @ColumnInfo(defaultValue = "1") val active: Boolean = true,
    @ColumnInfo(defaultValue = "") val notes: String = "",
)
""",
    "wren_room_migrations",
    "wren_migration_match",
    note="the field, with a SQL default for the non-null column",
    uses=("wren_migration_match",),
)
read(
    KT + "data/db/DosewiseDatabase.kt",
    "wren_room_migrations",
    note="the schema version",
    uses=("wren_room_migrations",),
)
edit(
    KT + "data/db/DosewiseDatabase.kt",
    "version = 7, exportSchema = true",
    "version = 8, exportSchema = true",
    "wren_room_migrations",
    note="bump the version",
    uses=("wren_room_migrations",),
)
read(
    KT + "data/db/Migrations.kt",
    "wren_room_migrations",
    "wren_migration_match",
    note="the migrations",
    uses=("wren_room_migrations",),
)
edit(
    KT + "data/db/Migrations.kt",
    """val ALL_MIGRATIONS = LEGACY_MIGRATIONS + arrayOf(MIGRATION_5_6, MIGRATION_6_7)
""",
    """val MIGRATION_7_8 =
    object : Migration(7, 8) {
        override fun migrate(db: SupportSQLiteDatabase) {
            db.execSQL("ALTER TABLE medications ADD COLUMN notes TEXT NOT NULL DEFAULT ''")
        }
    }

val ALL_MIGRATIONS = LEGACY_MIGRATIONS + arrayOf(MIGRATION_5_6, MIGRATION_6_7, MIGRATION_7_8)
""",
    "wren_room_migrations",
    "wren_migration_match",
    note="the 7 -> 8 migration with the same default",
    uses=("wren_room_migrations", "wren_migration_match"),
)
bash("./gradlew :app:compileStagingDebugKotlin", "Compile the app", note="routine: build")
read(
    "app/src/androidTest/java/app/dosewise/data/db/MigrationTest.kt",
    "wren_room_migrations",
    note="the migration tests",
    uses=("wren_room_migrations",),
)
edit(
    "app/src/androidTest/java/app/dosewise/data/db/MigrationTest.kt",
    """    private companion object {
        const val DB = "migration-test"
""",
    """    @Test
    fun migrate7To8GivesExistingMedicationsAnEmptyNote() {
        helper.createDatabase(DB, 7).use { db ->
            db.execSQL("INSERT INTO medications (id, name, dose_amount, dose_unit, dose_times, zone_id) VALUES (1, 'Levaxin', '1', 'tablet', '08:00', 'Europe/Oslo')")
        }
        helper.runMigrationsAndValidate(DB, 8, true, MIGRATION_7_8).use { db ->
            db.query("SELECT notes FROM medications WHERE id = 1").use { cursor ->
                assertThat(cursor.moveToFirst()).isTrue()
                assertThat(cursor.getString(0)).isEmpty()
            }
        }
    }

    private companion object {
        const val DB = "migration-test"
""",
    "wren_room_migrations",
    "wren_migration_match",
    note="a test for the migration",
    uses=("wren_room_migrations",),
)
bash(
    "./gradlew pixel6Api34StagingDebugAndroidTest -Pandroid.testInstrumentationRunnerArguments.class=app.dosewise.data.db.MigrationTest",
    "Run the migration tests on the managed device",
    "wren_gmd",
    note="the instrumented test command",
    uses=("wren_gmd",),
)
answer(
    'Medication has a non-null `notes` column (@ColumnInfo(defaultValue = "")), the database is at version 8 with '
    "MIGRATION_7_8 (`ADD COLUMN notes TEXT NOT NULL DEFAULT ''`, so the migrated schema matches the entity), and "
    "MigrationTest checks that existing medications get an empty note; it passes on the pixel6Api34 managed device.",
    "wren_room_migrations",
    "wren_migration_match",
    "wren_gmd",
)
user("Looks good. Commit it and push the branch.")
bash("git status --short", "See what changed", note="routine: before a commit")
bash(
    "git add app/src/main/java/app/dosewise/data/db app/src/androidTest app/schemas/app.dosewise.data.db.DosewiseDatabase/8.json && git commit -q -m 'db: add a notes column to medications' && git log --oneline -1",
    "Commit with the exported schema",
    "wren_commit_style",
    "wren_room_migrations",
    "wren_ci",
    note="commit, the schema JSON included",
    uses=("wren_commit_style", "wren_room_migrations"),
)
bash("git push -u origin HEAD", "Push the branch", note="routine: push")
answer("Committed as `db: add a notes column to medications` (with schema 8.json) and pushed.", "wren_commit_style")
user("Side question: the builds are slow. Would swapping Hilt for Koin help?")
answer(
    "Koin would drop the annotation processing, but we tried it in 2024 and went back: a missing binding only "
    "crashed at runtime on a rarely used screen, where Hilt fails the build. I would look at the build's other "
    "costs first rather than switch.",
    "wren_koin_rejected",
    "wren_hilt",
)
user("Open a draft pull request for it.")
bash("gh pr create --draft --fill", "Open a draft pull request", note="routine: a PR from the commit")
answer("Opened a draft pull request titled after the commit.")

# Session 3: a DST bug, a 24-hour clock bug, then a multi-part question.
session("dst-reminder")
user(
    "After the clocks went back on Sunday, patients in Norway got their 08:00 reminder at 07:00. Find the bug and "
    "fix it, with a test."
)
bash(
    "git log --oneline -5 -- app/src/main/java/app/dosewise/reminders/",
    "Recent changes to the reminders",
    note="routine: history",
)
read(
    KT + "reminders/NextDoseCalculator.kt",
    "wren_dose_time_zone",
    note="where the next dose time is computed",
    uses=("wren_dose_time_zone",),
)
edit(
    KT + "reminders/NextDoseCalculator.kt",
    """import java.time.ZoneId
import javax.inject.Inject

class NextDoseCalculator @Inject constructor(private val clock: Clock) {
    /** The first of [medication]'s dose times after now, or null when it is paused. */
    fun nextDose(medication: Medication): Instant? {
        if (!medication.active) return null
        val now = clock.instant()
        val offset = ZoneId.of(medication.zoneId).rules.getOffset(now)
        val today = now.atOffset(offset).toLocalDate()
        return listOf(today, today.plusDays(1))
            .flatMap { day -> medication.doseTimes.map { time -> day.atTime(time).toInstant(offset) } }
""",
    """import java.time.ZoneId
import java.time.ZonedDateTime
import javax.inject.Inject

class NextDoseCalculator @Inject constructor(private val clock: Clock) {
    /** The first of [medication]'s dose times after now, or null when it is paused. */
    fun nextDose(medication: Medication): Instant? {
        if (!medication.active) return null
        val now = clock.instant()
        val zone = ZoneId.of(medication.zoneId)
        val today = now.atZone(zone).toLocalDate()
        // each day's own offset: tomorrow's 08:00 is 08:00 even when the clocks change tonight
        return listOf(today, today.plusDays(1))
            .flatMap { day -> medication.doseTimes.map { time -> ZonedDateTime.of(day, time, zone).toInstant() } }
""",
    "wren_dose_time_zone",
    note="compute each day in the zone, not with today's offset",
    uses=("wren_dose_time_zone",),
)
bash("ls app/src/test/java/app/dosewise/reminders", "Find the calculator's tests", note="routine: look around")
read(
    "app/src/test/java/app/dosewise/reminders/NextDoseCalculatorTest.kt",
    "wren_dose_time_zone",
    "wren_clock_injection",
    note="the tests",
)
edit(
    "app/src/test/java/app/dosewise/reminders/NextDoseCalculatorTest.kt",
    """    @Test
    fun pausedMedicationHasNoNextDose() {
""",
    """    @Test
    fun keepsTheLocalTimeWhenTheClocksGoBack() {
        // Saturday evening; the clocks go back from 03:00 to 02:00 on Sunday 2026-10-25
        val next = NextDoseCalculator(at("2026-10-24T21:00+02:00[Europe/Oslo]")).nextDose(medication(LocalTime.of(8, 0)))
        assertThat(next).isEqualTo(instant("2026-10-25T08:00+01:00[Europe/Oslo]"))
    }

    @Test
    fun aTimeInTheSpringForwardGapMovesForward() {
        val next = NextDoseCalculator(at("2026-03-28T21:00+01:00[Europe/Oslo]")).nextDose(medication(LocalTime.of(2, 30)))
        assertThat(next).isEqualTo(instant("2026-03-29T03:30+02:00[Europe/Oslo]"))
    }

    @Test
    fun pausedMedicationHasNoNextDose() {
""",
    "wren_dose_time_zone",
    "wren_clock_injection",
    note="DST tests with a fixed clock; the gap case is what the memory states",
    uses=("wren_dose_time_zone",),
)
bash(
    "./gradlew :app:testStagingDebugUnitTest --tests 'app.dosewise.reminders.NextDoseCalculatorTest'",
    "Run the calculator's tests",
    note="routine: unit tests",
)
answer(
    "NextDoseCalculator used today's UTC offset for tomorrow's dose too, so on the evening before the change "
    "08:00 was computed at +02:00, i.e. 07:00 winter time. It now builds each day's ZonedDateTime in the "
    "medication's zone. Two tests cover the autumn change and a 02:30 dose in the spring gap (moves to 03:30). "
    "Alarms already set are replaced when the update is installed: BootReceiver reschedules all of them on "
    "MY_PACKAGE_REPLACED.",
    "wren_dose_time_zone",
    "wren_boot_reschedule",
)
user("Would WorkManager not be simpler than exact alarms for all of this?")
answer(
    "Simpler, but we moved away from it on purpose: under Doze, WorkManager ran reminders up to 40 minutes late, "
    "and a late dose reminder is a patient-safety bug. The DST fix is in the time computation and would be needed "
    "with WorkManager too.",
    "wren_exact_alarms",
    "wren_dose_time_zone",
)
user("Also: the Today screen shows '8:00 AM' to Norwegian users whose phones use the 24-hour clock.")
read(KT + "ui/today/TodayScreen.kt", "wren_time_format", note="the screen")
read(KT + "ui/common/TimeText.kt", "wren_time_format", note="the shared time formatter", uses=("wren_time_format",))
edit(
    KT + "ui/today/TodayScreen.kt",
    """        leadingContent = { Text(row.time.format(DateTimeFormatter.ofPattern("h:mm a", Locale.US))) },
""",
    """        leadingContent = { Text(formatDoseTime(row.time)) },
""",
    "wren_time_format",
    note="use the shared formatter",
    uses=("wren_time_format",),
)
edit(
    KT + "ui/today/TodayScreen.kt",
    """import app.dosewise.R
import java.time.format.DateTimeFormatter
import java.util.Locale
""",
    """import app.dosewise.R
import app.dosewise.ui.common.formatDoseTime
""",
    "wren_time_format",
    note="imports",
    uses=("wren_time_format",),
)
answer(
    "The Today screen formatted times with a fixed US pattern; it now uses formatDoseTime(), which follows the "
    "phone's 12/24-hour setting and locale like the other screens.",
    "wren_time_format",
)
user(
    "Format the code, run the unit tests and commit the two fixes separately. Also, which minSdk are we on: can "
    "the desugaring library go now?"
)
bash("./gradlew ktlintFormat", "Format the code", note="routine: formatting")
bash("./gradlew testStagingDebugUnitTest", "Run the unit tests", note="routine: unit tests")
bash(
    "git add app/src/main/java/app/dosewise/reminders/NextDoseCalculator.kt app/src/test && git commit -q -m 'reminders: keep local dose times across DST changes'",
    "Commit the DST fix",
    "wren_commit_style",
    "wren_ci",
    note="first commit",
    uses=("wren_commit_style",),
)
bash(
    "git add app/src/main/java/app/dosewise/ui && git commit -q -m 'ui: follow the 12/24-hour setting on the Today screen'",
    "Commit the time format fix",
    "wren_commit_style",
    "wren_ci",
    note="second commit",
    uses=("wren_commit_style",),
)
read("app/build.gradle.kts", "wren_min_sdk_26", note="minSdk and the desugaring setup")
answer(
    "Formatted, the unit tests pass, and the fixes are two commits: `reminders: keep local dose times across DST "
    "changes` and `ui: follow the 12/24-hour setting on the Today screen`. minSdk is 26 (raised from 24 in 3.2), "
    "so java.time is native and nothing needs core library desugaring any more: it can go (that is DW-388).",
    "wren_min_sdk_26",
    "wren_commit_style",
)

# Session 4: release 3.5.0.
session("release-3.5.0")
user("Prepare release 3.5.0: bump the version, add the changelog entry, and write the Play release notes.")
call(
    "memory_search",
    {"query": "release version changelog play release notes"},
    "wren_release_process",
    "wren_version_code",
    "wren_release_notes",
    note="ask the memory first",
)
bash("git log --oneline v3.4.2..HEAD", "What went in since 3.4.2", note="routine: the changes to describe")
read(
    "app/build.gradle.kts",
    "wren_version_code",
    "wren_release_process",
    note="the version",
    uses=("wren_version_code",),
)
edit(
    "app/build.gradle.kts",
    """        versionCode = 30402
        versionName = "3.4.2"
""",
    """        versionCode = 30500
        versionName = "3.5.0"
""",
    "wren_version_code",
    "wren_release_process",
    note="the version scheme",
    uses=("wren_version_code",),
)
read("CHANGELOG.md", "wren_release_process", note="the changelog")
edit(
    "CHANGELOG.md",
    """# Changelog

""",
    """# Changelog

## 3.5.0 (2026-11-27)
- Added: a personal note per medication.
- Fixed: reminders came an hour off the day the clocks changed.
- Fixed: the Today screen now follows the phone's 24-hour setting.
- Fixed: reminders could not be set on Android 14 phones without exact-alarm access; they now arrive a little less punctually until it is allowed.

""",
    "wren_release_process",
    note="the new section",
)
bash(
    "ls fastlane/metadata/android/*/changelogs/",
    "Find the Play release notes",
    "wren_release_notes",
    note="where the notes go",
    uses=("wren_release_notes",),
)
bash(
    "cat > fastlane/metadata/android/en-US/changelogs/30500.txt <<'EOF'\n"
    "Keep a personal note with each medication, such as 'take with food'. Reminders now arrive at the right time on "
    "the day the clocks change, and times follow your phone's 24-hour setting.\nEOF",
    "Write the English release notes",
    "wren_release_notes",
    "wren_version_code",
    note="file named by versionCode, under 500 characters, for patients",
    uses=("wren_release_notes", "wren_version_code"),
)
bash(
    "cat > fastlane/metadata/android/nb-NO/changelogs/30500.txt <<'EOF'\n"
    "Skriv et eget notat til hver medisin, for eksempel 'tas med mat'. Påminnelsene kommer nå til riktig tid den "
    "dagen klokken stilles, og klokkeslett følger telefonens 24-timersinnstilling.\nEOF",
    "Write the Norwegian release notes",
    "wren_release_notes",
    "wren_version_code",
    note="the second locale",
    uses=("wren_release_notes", "wren_version_code"),
)
bash("git diff --stat", "Review the release changes", note="routine: review")
answer(
    "Version 3.5.0 (versionCode 30500), a 3.5.0 section in CHANGELOG.md, and Play release notes in en-US and nb-NO "
    "(changelogs/30500.txt, both well under 500 characters). Ready for the release commit and tag.",
    "wren_version_code",
    "wren_release_process",
    "wren_release_notes",
)
user("Good. Commit it and tag it so the internal build goes out.")
bash("git status --short", "See what changed", note="routine: before a commit")
bash(
    "git add app/build.gradle.kts CHANGELOG.md fastlane/metadata && git commit -q -m 'release: 3.5.0' && git log --oneline -1",
    "Commit the release",
    "wren_release_process",
    "wren_commit_style",
    note="the release commit's message",
    uses=("wren_release_process", "wren_commit_style"),
)
bash(
    "git tag -a v3.5.0 -m 'dosewise 3.5.0' && git push origin HEAD v3.5.0",
    "Tag and push the release",
    "wren_release_process",
    note="the tag starts the release workflow",
    uses=("wren_release_process",),
)
answer(
    "Committed as `release: 3.5.0` and pushed the tag v3.5.0: the release workflow builds the signed prodRelease "
    "bundle and uploads it to the internal track. Production is still the staged rollout by hand in Play Console.",
    "wren_release_process",
)


# Session 5: small requests that need no memory at all (every step's `relevant` is empty: a HUD or cold-start
# block here is noise), several of them on files that memories are about.
session("small-requests")
user("Fix the typo in the first sentence of README.md.")
read("README.md", note="the sentence")
edit("README.md", "medication remidners and", "medication reminders and", note="the typo")
answer("Fixed: 'remidners' is now 'reminders'.")
user("How many Kotlin files are there under app/src/main?")
bash("find app/src/main -name '*.kt' | wc -l", "Count the Kotlin files", note="count")
answer("13 Kotlin files.")
user("Show me the last three commits.")
bash("git log --oneline -3", "The last three commits", note="look")
answer("Listed above, newest first: the 3.5.0 release commit and the two fixes before it.")
user("In TodayViewModel.kt, rename the parameter `m` of onTaken to `medication`.")
read(KT + "ui/today/TodayViewModel.kt", note="the function")
edit(
    KT + "ui/today/TodayViewModel.kt",
    """    fun onTaken(m: Medication) {
        viewModelScope.launch { doseEvents.recordTaken(m.id, clock.instant()) }
""",
    """    fun onTaken(medication: Medication) {
        viewModelScope.launch { doseEvents.recordTaken(medication.id, clock.instant()) }
""",
    note="the rename",
)
answer("Renamed: onTaken(medication: Medication).")
user("What does .gitignore ignore?")
read(".gitignore", note="look")
answer(
    "IDE files (*.iml, .idea/), Gradle and build output (.gradle/, build/, /captures), local.properties and keystores (*.jks, *.keystore)."
)
user("How much heap does gradle.properties give the Gradle daemon?")
read("gradle.properties", note="look it up")
answer("4 GB: org.gradle.jvmargs=-Xmx4g.")
user("Is the namespace in app/build.gradle.kts the same as the applicationId?")
read("app/build.gradle.kts", note="look it up")
answer("Yes, both are app.dosewise.")
user("Which JDK does the CI workflow set up?")
read(".github/workflows/ci.yml", note="look it up")
answer("Temurin 17 (actions/setup-java@v4).")
user("Sort the <uses-permission> lines in AndroidManifest.xml alphabetically.")
read("app/src/main/AndroidManifest.xml", note="the permissions")
edit(
    "app/src/main/AndroidManifest.xml",
    """    <uses-permission android:name="android.permission.SCHEDULE_EXACT_ALARM" />
    <uses-permission android:name="android.permission.RECEIVE_BOOT_COMPLETED" />
""",
    """    <uses-permission android:name="android.permission.RECEIVE_BOOT_COMPLETED" />
    <uses-permission android:name="android.permission.SCHEDULE_EXACT_ALARM" />
""",
    note="swap the last two",
)
answer("Sorted: INTERNET, POST_NOTIFICATIONS, RECEIVE_BOOT_COMPLETED, SCHEDULE_EXACT_ALARM.")
user("List the files under fastlane/.")
bash("find fastlane -type f | sort", "List the fastlane files", note="look")
answer(
    "Four release-note files: fastlane/metadata/android/en-US/changelogs/30402.txt and 30500.txt, and the same two "
    "under nb-NO."
)
user("How many lines does CHANGELOG.md have?")
bash("wc -l CHANGELOG.md", "Count the lines", note="count")
answer("CHANGELOG.md has 17 lines.")
user("In NextDoseCalculatorTest, rename picksTheNextTimeToday to picksTheNextDoseTimeToday.")
read("app/src/test/java/app/dosewise/reminders/NextDoseCalculatorTest.kt", note="the test")
edit(
    "app/src/test/java/app/dosewise/reminders/NextDoseCalculatorTest.kt",
    "fun picksTheNextTimeToday()",
    "fun picksTheNextDoseTimeToday()",
    note="the rename",
)
answer("Renamed to picksTheNextDoseTimeToday.")
user("What is the database file called on the phone?")
read(KT + "data/db/DosewiseDatabase.kt", note="look it up")
answer("dosewise.db.")


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
                "tags": [PROJECT, *tags.split(",")],
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
        "project": PROJECT,
        "about": "Scripted agent sessions for benchmarks/bench_agent_view.py; generated by build.py (edit that).",
        "sessions": sessions,
    }


def render() -> dict[str, str]:
    mems = memories()
    assert len(mems) >= 40 and len({m["id"] for m in mems}) == len(mems)
    keys = [key for key, *_ in MEMS]
    assert len(set(keys)) == len(keys) and all(k.startswith(KEY_PREFIX) for k in keys), "keys: unique, own prefix"
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
