# ruff: noqa: E501
"""Build the agent-view judge9 scenario: memories.jsonl, project.json and steps.json.

One made-up project, `purlwise` (a Kotlin / Jetpack Compose Android app for knitters: row counters, pattern
PDFs, a yarn stash, patterns synced with a small backend), with 53 memories of the kind a team records
(decisions, rejected alternatives, conventions, gotchas, facts, preferences, todos; one older/newer pair about
the sync schedule), the project's source files, and five scripted coding sessions whose steps are each
labelled with the memories that matter for that step. Written blind for codememory (the writer read only
benchmarks/data/agent_view/build.py for the format); labels were set from the text before anything was run.

    python benchmarks/data/agent_view_judge9/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge9/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (prefix `pw_`); the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Tool-call arguments
may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays every
scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (OpenCode and Claude Code refuse to edit a file
their process has not read, and each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: NetworkType.UNMETERED,
LocalSnackbarHost, versionCode 30200, ExistingPeriodicWorkPolicy.UPDATE, values-de/strings.xml), reads or
edits the file the memory points to for this task, or does what the memory prescribes where neither the
user's request nor the file being edited would have told it to. A memory the call merely agrees with (a
pattern the file already follows, a warning heeded by not doing something) is relevant, not used. Final
answers have no `uses`: use detection watches what the agent does (tool calls and edits) and the ids it
cites. These labels score use detection (bench_agent_view.py: which shown memories the session went on to use).
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
FIRST, LAST = datetime(2025, 5, 12, 9, 0, tzinfo=UTC), datetime(2026, 11, 20, 16, 0, tzinfo=UTC)


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- architecture, early decisions
    (
        "pw_hilt",
        "decision",
        0.5,
        "di,hilt",
        "Dependency injection is Hilt (modules in app/src/main/java/app/purlwise/di/); ViewModels are @HiltViewModel and workers @HiltWorker with the HiltWorkerFactory set in PurlwiseApp.",
    ),
    (
        "pw_koin_rejected",
        "rejected_alternative",
        0.4,
        "di,koin",
        "Rejected Koin (tried in 1.x): missing bindings only showed up at runtime on users' phones; Hilt fails the build instead.",
    ),
    (
        "pw_viewmodel_state",
        "convention",
        0.7,
        "compose,ui,viewmodel",
        "Screens are split into a Route (gets the ViewModel, collects state with collectAsStateWithLifecycle) and a stateless Screen taking a UiState plus lambdas. A ViewModel exposes exactly one StateFlow<UiState> built with stateIn(WhileSubscribed(5_000)); no LiveData, no mutableStateOf in ViewModels.",
    ),
    (
        "pw_sync_interval_old",
        "decision",
        0.5,
        "sync,workmanager",
        "Pattern sync is a PeriodicWorkRequest for SyncWorker every 6 hours on any connected network (NetworkType.CONNECTED), scheduled in PurlwiseApp.onCreate.",
    ),
    (
        "pw_ktor_client",
        "decision",
        0.4,
        "network,ktor",
        "Networking is the Ktor client (OkHttp engine) with kotlinx.serialization; Retrofit and Moshi were removed in 3.0.",
    ),
    (
        "pw_counter_persist",
        "gotcha",
        0.8,
        "counter,room,data-loss",
        "Every row-counter change is written to Room at once through CounterDao.setRow; nothing is kept only in the ViewModel or debounced. In 2.x knitters lost rows when Android killed the app while the phone lay on the couch.",
    ),
    (
        "pw_strings_de",
        "convention",
        0.8,
        "i18n,strings,ui",
        "Every user-facing string goes in app/src/main/res/values/strings.xml AND gets its German entry in values-de/strings.xml in the same change (about a third of our users are German). If unsure of the German, copy the English and mark it <!-- TODO de --> so Jana finds it; lint's MissingTranslation is an error in CI.",
    ),
    (
        "pw_pdf_renderer",
        "decision",
        0.5,
        "pdf,viewer",
        "Pattern PDFs are rendered with the platform PdfRenderer into a tiled bitmap cache (ui/viewer/PageTiles.kt). PdfBox-Android was rejected: 8 MB more APK and slow on big charts.",
    ),
    (
        "pw_pdf_fd_leak",
        "gotcha",
        0.5,
        "pdf,viewer",
        "PdfRenderer does not close its ParcelFileDescriptor: close the renderer and then the descriptor, or the viewer dies with 'Too many open files' after a few hundred page flips.",
    ),
    (
        "pw_snackbar_host",
        "convention",
        0.7,
        "compose,ui,snackbar",
        "Snackbars go through the app-wide SnackbarHostState from LocalSnackbarHost (ui/AppScaffold.kt): call LocalSnackbarHost.current.showSnackbar(...) from a LaunchedEffect. Screens never create their own Scaffold or SnackbarHostState (two hosts stacked snackbars on top of each other).",
    ),
    (
        "pw_theme_colors",
        "convention",
        0.7,
        "compose,ui,theme",
        "Colors come from MaterialTheme.colorScheme (secondary/grey text is onSurfaceVariant) and text styles from MaterialTheme.typography; no Color(0xFF...), Color.Gray or hard-coded sp in screens, or the dark 'night knitting' theme and dynamic color break.",
    ),
    (
        "pw_turbine_tests",
        "convention",
        0.6,
        "tests,unit,viewmodel",
        "ViewModel unit tests use runTest, the MainDispatcherRule in app/src/test/java/app/purlwise/ and Turbine's uiState.test { } with a fake DAO from data/db/Fake*.kt; no Thread.sleep, no Mockito for DAOs.",
    ),
    (
        "pw_main_dispatcher",
        "gotcha",
        0.5,
        "tests,coroutines",
        "A unit test that touches viewModelScope without `@get:Rule val mainRule = MainDispatcherRule()` fails with 'Module with the Main dispatcher had failed to initialize. For tests Dispatchers.setMain from kotlinx-coroutines-test module can be used'.",
    ),
    (
        "pw_dao_tests",
        "convention",
        0.4,
        "tests,room",
        "DAO tests run under Robolectric with Room.inMemoryDatabaseBuilder(...).allowMainThreadQueries(); they never open the real purlwise.db file.",
    ),
    (
        "pw_screenshot_tests",
        "convention",
        0.4,
        "tests,paparazzi,viewer",
        "Paparazzi screenshot tests exist only for the pattern viewer's row highlighter (ui/viewer); re-record with ./gradlew :app:recordPaparazziDebug after an intended change to the highlighter.",
    ),
    (
        "pw_ci_checks",
        "convention",
        0.7,
        "ci,lint,ktlint,detekt",
        "CI (.github/workflows/android.yml) runs `./gradlew ktlintCheck detekt lintDebug testDebugUnitTest`; run all four before pushing, not just ktlint. `./gradlew ktlintFormat` fixes most ktlint findings.",
    ),
    (
        "pw_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commit subjects: lowercase area prefix (counter:, db:, sync:, ui:, release:), imperative, at most 72 characters; the issue goes in the body as 'Refs #123', never in the subject.",
    ),
    # --- database
    (
        "pw_room_migrations",
        "decision",
        0.8,
        "room,database,migration",
        "Room schema changes: additive ones (new table, new nullable column) are an AutoMigration(from = N-1, to = N) in PurlDatabase's autoMigrations; renames, deletes and type changes are a hand-written Migration in data/db/Migrations.kt. Never fallbackToDestructiveMigration: a knitter's counters are months of work.",
    ),
    (
        "pw_room_notnull",
        "gotcha",
        0.6,
        "room,database,migration",
        "An AutoMigration that adds a NOT NULL column without @ColumnInfo(defaultValue = ...) fails the build: 'New NOT NULL column 'x' added with no default value specified. Please specify the default value using @ColumnInfo.'",
    ),
    (
        "pw_schema_json",
        "convention",
        0.6,
        "room,database,schema",
        "Room exports its schema to app/schemas/app.purlwise.data.db.PurlDatabase/N.json (KSP arg room.schemaLocation); the build writes the new N.json after a version bump and it is committed together with the bump: AutoMigration and MigrationTest need every version's JSON.",
    ),
    (
        "pw_migration_test",
        "convention",
        0.7,
        "room,tests,migration",
        "Every database version bump adds a case to app/src/androidTest/java/app/purlwise/data/db/MigrationTest.kt: create version N-1 with a real row through MigrationTestHelper, run the migration to N and check the row survived.",
    ),
    (
        "pw_schema_assets",
        "gotcha",
        0.6,
        "room,tests,gradle",
        'MigrationTest fails with \'Cannot find the schema file in the assets folder. Make sure to include the exported json schemas in your test assets\' unless app/build.gradle.kts has sourceSets { getByName("androidTest").assets.srcDir("$projectDir/schemas") }. It got lost when the build moved to the Kotlin DSL.',
    ),
    (
        "pw_datastore",
        "decision",
        0.4,
        "settings,datastore,migration",
        "Settings live in Preferences DataStore (data/prefs/SettingsRepository.kt). The SharedPreferencesMigration from 2.0 stays until 4.0: some tablets still update straight from 1.x.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "pw_backend_deploy",
        "fact",
        0.4,
        "backend,deploy",
        "The sync backend is the separate purlwise-api repository (Kotlin/Ktor server) and deploys to Fly.io, region fra; nothing in this repository deploys it.",
    ),
    (
        "pw_remote_config",
        "convention",
        0.4,
        "firebase,config",
        "Firebase Remote Config keys are snake_case and every key has an in-app default in res/xml/remote_config_defaults.xml; a key missing there reads as an empty string on first launch.",
    ),
    (
        "pw_gradle_config_cache",
        "gotcha",
        0.4,
        "gradle,build,config",
        "The Gradle configuration cache is on (gradle.properties). A custom task that touches project.* at execution time fails the build with 'invocation of Task.project at execution time is unsupported'.",
    ),
    (
        "pw_server_format_migration",
        "fact",
        0.3,
        "backend,patterns,migration",
        "The server moved pattern charts from format v1 to v2 (run-length rows) in March 2026; the app still reads v1 for offline copies saved before that.",
    ),
    (
        "pw_yarn_weights",
        "fact",
        0.3,
        "stash,yarn",
        "Yarn weights use the Craft Yarn Council names (Lace, Fingering, Sport, DK, Worsted, Aran, Bulky); the German UI keeps the English names, knitters expect them.",
    ),
    (
        "pw_needle_units",
        "convention",
        0.4,
        "stash,units",
        "Needle sizes are stored in millimetres as Float; US sizes are only a display conversion in ui/format/Needles.kt.",
    ),
    (
        "pw_stash_photos",
        "decision",
        0.4,
        "stash,photos,backup",
        "Stash photos are stored app-private in filesDir/stash, never in MediaStore, and backup_rules.xml excludes them (size).",
    ),
    (
        "pw_photo_picker",
        "decision",
        0.4,
        "stash,photos,permissions",
        "Stash photos are picked with the Photo Picker (PickVisualMedia); no READ_MEDIA_IMAGES permission, the Play policy review flagged it in 2025.",
    ),
    (
        "pw_acra_optin",
        "preference",
        0.5,
        "privacy,crash-reports",
        "No analytics and no crash SDK that sends data on its own: crash reports go through ACRA to our endpoint and only after the user taps 'Send report'.",
    ),
    (
        "pw_billing",
        "decision",
        0.4,
        "billing,supporter",
        "The one-time 'Supporter' unlock uses Play Billing 7; the entitlement is cached in DataStore and re-checked with queryPurchasesAsync on every start.",
    ),
    (
        "pw_billing_testers",
        "gotcha",
        0.4,
        "billing,tests,play",
        "Test purchases on the internal track charge real money unless the account is listed under Play Console > Setup > License testing.",
    ),
    (
        "pw_font_license",
        "fact",
        0.3,
        "chart,font,license",
        "The chart symbol font res/font/knit_symbols.ttf is CC BY 4.0; the About screen must keep its credit line.",
    ),
    (
        "pw_chart_symbols",
        "convention",
        0.4,
        "chart,ui",
        "Knitting chart cells are glyphs of the symbol font, not drawn paths; a new stitch means a new mapping in ui/chart/Stitches.kt.",
    ),
    (
        "pw_edge_to_edge",
        "gotcha",
        0.4,
        "ui,android15,viewer",
        "targetSdk 35 forces edge-to-edge: the pattern viewer is full screen outside AppScaffold and pads itself with WindowInsets.safeDrawing (it drew under the status bar until 3.1.4).",
    ),
    (
        "pw_fdroid_rejected",
        "rejected_alternative",
        0.3,
        "release,fdroid",
        "Rejected an F-Droid release for now: Play Billing and Firebase Remote Config are non-free dependencies. Revisit if the Supporter unlock becomes a donation link.",
    ),
    (
        "pw_onboarding",
        "fact",
        0.3,
        "onboarding,datastore",
        "Onboarding is three pages shown once; the flag is the DataStore key onboarding_done_v2 (v1 was reset when the pages changed in 3.0).",
    ),
    (
        "pw_deeplinks",
        "convention",
        0.4,
        "deeplinks,patterns",
        "Shared pattern links are https://purlwise.app/p/{patternId} (verified App Links, assetlinks.json on the website); the purlwise:// scheme is only kept for old shortcuts.",
    ),
    (
        "pw_staged_rollout",
        "preference",
        0.5,
        "release,play",
        "Production rollouts start at 20 % and go to 100 % only after 48 h with crash-free users above 99.5 % in Play vitals; promoting is done by hand in the Play Console.",
    ),
    (
        "pw_play_data_safety",
        "fact",
        0.3,
        "release,play,privacy",
        "The Play Data safety form declares only optional crash reports (ACRA); any new SDK that collects data needs the form updated before its release.",
    ),
    (
        "pw_gauge_rounding",
        "fact",
        0.3,
        "calculator,gauge",
        "The gauge calculator rounds stitch counts to the pattern's repeat (a multiple of the chart width), not to the nearest stitch.",
    ),
    (
        "pw_todo_ravelry",
        "todo",
        0.3,
        "patterns,import",
        "TODO: import patterns from Ravelry (OAuth app approved; their API allows 100 requests a minute).",
    ),
    (
        "pw_todo_wear",
        "todo",
        0.3,
        "wear,counter",
        "TODO: Wear OS tile for the row counter, so a knitter can count from the watch.",
    ),
    (
        "pw_tablet_layout",
        "convention",
        0.3,
        "ui,tablet,viewer",
        "On tablets (WindowWidthSizeClass.EXPANDED) the pattern viewer shows the chart and the written instructions side by side.",
    ),
    # --- release
    (
        "pw_version_code",
        "convention",
        0.7,
        "release,versioning,gradle",
        "versionCode = major*10000 + minor*100 + patch (3.1.4 is 30104), set by hand in app/build.gradle.kts next to versionName; Play rejects an upload whose versionCode is not higher than the last one.",
    ),
    (
        "pw_changelog",
        "convention",
        0.6,
        "release,changelog,play",
        "On release, CHANGELOG.md's [Unreleased] items move under '## [x.y.z] - date', and the user-facing lines also go to fastlane/metadata/android/en-US/changelogs/<versionCode>.txt for Play's 'What's new' (500 characters at most).",
    ),
    (
        "pw_r8_serialization",
        "gotcha",
        0.8,
        "release,r8,serialization,sync",
        "3.1.0 crashed on pattern sync in release builds only: 'Serializer for class 'PatternDto' is not found'. R8 strips kotlinx.serialization serializers; app/proguard-rules.pro keeps them only for app.purlwise.data.sync.dto.**, so any @Serializable class outside that package needs its own keep rules (or has to move into dto).",
    ),
    (
        "pw_release_signing",
        "fact",
        0.5,
        "release,signing",
        "Release builds are signed with the upload key from PURLWISE_UPLOAD_STORE_FILE and PURLWISE_UPLOAD_STORE_PASSWORD in ~/.gradle/gradle.properties (Play App Signing holds the app key); the keystore never goes into the repository.",
    ),
    (
        "pw_release_tag",
        "convention",
        0.7,
        "release,git,ci",
        "Releases are annotated tags vX.Y.Z on main. Pushing the tag runs .github/workflows/release.yml, which builds the bundle and uploads it to the Play internal track; nobody uploads by hand.",
    ),
    # --- sync, newer
    (
        "pw_unique_work_update",
        "gotcha",
        0.6,
        "sync,workmanager",
        "The periodic sync is enqueued with enqueueUniquePeriodicWork(SyncWorker.UNIQUE_NAME, ...). With ExistingPeriodicWorkPolicy.KEEP a changed interval or constraint never reaches existing installs; use UPDATE whenever the request changes.",
    ),
    (
        "pw_sync_interval_new",
        "decision",
        0.7,
        "sync,workmanager,data-usage",
        "Agreed in #212 after the data-usage complaints: periodic pattern sync every 12 hours and only on unmetered networks (NetworkType.UNMETERED). The 'Sync now' button in Settings still syncs on any network (a one-time expedited request).",
    ),
]

# ------------------------------------------------------------------------------------------ project
SRC = "app/src/main/java/app/purlwise"
FILES: dict[str, str] = {
    "README.md": """# purlwise

Android app for knitters: row and repeat counters, pattern PDFs with a row highlighter, and a yarn stash.
Patterns sync with purlwise-api, so a project moves between a phone and a tablet.

- `app/`: the app (Kotlin, Jetpack Compose, Room, Hilt, WorkManager, Ktor)
- `./gradlew :app:installDebug` runs it on a device, `./gradlew :app:testDebugUnitTest` runs the unit tests
- instrumented tests (`app/src/androidTest`) need an emulator or a device
- Pattens, counters and the stash are stored in Room, see `app/src/main/java/app/purlwise/data/db/`
""",
    "settings.gradle.kts": """pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "purlwise"
include(":app")
""",
    "build.gradle.kts": """plugins {
    alias(libs.plugins.android.application) apply false
    alias(libs.plugins.kotlin.android) apply false
    alias(libs.plugins.kotlin.compose) apply false
    alias(libs.plugins.kotlin.serialization) apply false
    alias(libs.plugins.ksp) apply false
    alias(libs.plugins.hilt) apply false
    alias(libs.plugins.ktlint) apply false
    alias(libs.plugins.detekt) apply false
}
""",
    "gradle.properties": """org.gradle.jvmargs=-Xmx3g -Dfile.encoding=UTF-8
org.gradle.configuration-cache=true
org.gradle.parallel=true
android.useAndroidX=true
kotlin.code.style=official
""",
    "gradle/libs.versions.toml": """[versions]
agp = "8.7.3"
kotlin = "2.1.0"
ksp = "2.1.0-1.0.29"
composeBom = "2024.12.01"
room = "2.6.1"
hilt = "2.53.1"
hiltX = "1.2.0"
work = "2.10.0"
ktor = "3.0.3"
serialization = "1.7.3"
coroutines = "1.9.0"
turbine = "1.2.0"
ktlint = "12.1.1"
detekt = "1.23.7"

[libraries]
compose-bom = { group = "androidx.compose", name = "compose-bom", version.ref = "composeBom" }
compose-material3 = { group = "androidx.compose.material3", name = "material3" }
room-runtime = { group = "androidx.room", name = "room-runtime", version.ref = "room" }
room-ktx = { group = "androidx.room", name = "room-ktx", version.ref = "room" }
room-compiler = { group = "androidx.room", name = "room-compiler", version.ref = "room" }
room-testing = { group = "androidx.room", name = "room-testing", version.ref = "room" }
hilt-android = { group = "com.google.dagger", name = "hilt-android", version.ref = "hilt" }
hilt-compiler = { group = "com.google.dagger", name = "hilt-compiler", version.ref = "hilt" }
hilt-work = { group = "androidx.hilt", name = "hilt-work", version.ref = "hiltX" }
hilt-navigation-compose = { group = "androidx.hilt", name = "hilt-navigation-compose", version.ref = "hiltX" }
work-runtime = { group = "androidx.work", name = "work-runtime-ktx", version.ref = "work" }
ktor-client-okhttp = { group = "io.ktor", name = "ktor-client-okhttp", version.ref = "ktor" }
ktor-client-content-negotiation = { group = "io.ktor", name = "ktor-client-content-negotiation", version.ref = "ktor" }
ktor-serialization-json = { group = "io.ktor", name = "ktor-serialization-kotlinx-json", version.ref = "ktor" }
kotlinx-serialization-json = { group = "org.jetbrains.kotlinx", name = "kotlinx-serialization-json", version.ref = "serialization" }
coroutines-test = { group = "org.jetbrains.kotlinx", name = "kotlinx-coroutines-test", version.ref = "coroutines" }
turbine = { group = "app.cash.turbine", name = "turbine", version.ref = "turbine" }

[plugins]
android-application = { id = "com.android.application", version.ref = "agp" }
kotlin-android = { id = "org.jetbrains.kotlin.android", version.ref = "kotlin" }
kotlin-compose = { id = "org.jetbrains.kotlin.plugin.compose", version.ref = "kotlin" }
kotlin-serialization = { id = "org.jetbrains.kotlin.plugin.serialization", version.ref = "kotlin" }
ksp = { id = "com.google.devtools.ksp", version.ref = "ksp" }
hilt = { id = "com.google.dagger.hilt.android", version.ref = "hilt" }
ktlint = { id = "org.jlleitschuh.gradle.ktlint", version.ref = "ktlint" }
detekt = { id = "io.gitlab.arturbosch.detekt", version.ref = "detekt" }
""",
    "app/build.gradle.kts": """plugins {
    alias(libs.plugins.android.application)
    alias(libs.plugins.kotlin.android)
    alias(libs.plugins.kotlin.compose)
    alias(libs.plugins.kotlin.serialization)
    alias(libs.plugins.ksp)
    alias(libs.plugins.hilt)
    alias(libs.plugins.ktlint)
    alias(libs.plugins.detekt)
}

android {
    namespace = "app.purlwise"
    compileSdk = 35

    defaultConfig {
        applicationId = "app.purlwise"
        minSdk = 26
        targetSdk = 35
        versionCode = 30104
        versionName = "3.1.4"
        testInstrumentationRunner = "androidx.test.runner.AndroidJUnitRunner"
    }

    signingConfigs {
        create("upload") {
            storeFile = providers.gradleProperty("PURLWISE_UPLOAD_STORE_FILE").orNull?.let(::file)
            storePassword = providers.gradleProperty("PURLWISE_UPLOAD_STORE_PASSWORD").orNull
            keyAlias = "upload"
            keyPassword = providers.gradleProperty("PURLWISE_UPLOAD_STORE_PASSWORD").orNull
        }
    }

    buildTypes {
        release {
            isMinifyEnabled = true
            isShrinkResources = true
            proguardFiles(getDefaultProguardFile("proguard-android-optimize.txt"), "proguard-rules.pro")
            signingConfig = signingConfigs.getByName("upload")
        }
    }

    buildFeatures { compose = true }
}

ksp {
    arg("room.schemaLocation", "$projectDir/schemas")
}

dependencies {
    implementation(platform(libs.compose.bom))
    implementation(libs.compose.material3)
    implementation(libs.room.runtime)
    implementation(libs.room.ktx)
    ksp(libs.room.compiler)
    implementation(libs.hilt.android)
    ksp(libs.hilt.compiler)
    implementation(libs.hilt.work)
    implementation(libs.hilt.navigation.compose)
    implementation(libs.work.runtime)
    implementation(libs.ktor.client.okhttp)
    implementation(libs.ktor.client.content.negotiation)
    implementation(libs.ktor.serialization.json)
    implementation(libs.kotlinx.serialization.json)

    testImplementation(libs.coroutines.test)
    testImplementation(libs.turbine)
    androidTestImplementation(libs.room.testing)
}
""",
    "app/proguard-rules.pro": """# kotlinx.serialization: keep the generated serializers of the sync DTOs
-keepattributes *Annotation*, InnerClasses
-dontnote kotlinx.serialization.**
-keep,includedescriptorclasses class app.purlwise.data.sync.dto.**$$serializer { *; }
-keepclassmembers class app.purlwise.data.sync.dto.** {
    *** Companion;
    kotlinx.serialization.KSerializer serializer(...);
}

# ACRA
-keep class org.acra.** { *; }
""",
    "app/src/main/AndroidManifest.xml": """<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android"
    xmlns:tools="http://schemas.android.com/tools">

    <uses-permission android:name="android.permission.INTERNET" />

    <application
        android:name=".PurlwiseApp"
        android:label="@string/app_name"
        android:icon="@mipmap/ic_launcher"
        android:dataExtractionRules="@xml/backup_rules"
        android:theme="@style/Theme.Purlwise">
        <activity android:name=".MainActivity" android:exported="true">
            <intent-filter>
                <action android:name="android.intent.action.MAIN" />
                <category android:name="android.intent.category.LAUNCHER" />
            </intent-filter>
        </activity>
        <!-- WorkManager is initialised on demand by PurlwiseApp (Hilt workers) -->
        <provider
            android:name="androidx.startup.InitializationProvider"
            android:authorities="${applicationId}.androidx-startup"
            tools:node="remove" />
    </application>
</manifest>
""",
    f"{SRC}/PurlwiseApp.kt": """package app.purlwise

import android.app.Application
import androidx.hilt.work.HiltWorkerFactory
import androidx.work.Configuration
import androidx.work.Constraints
import androidx.work.ExistingPeriodicWorkPolicy
import androidx.work.NetworkType
import androidx.work.PeriodicWorkRequestBuilder
import androidx.work.WorkManager
import app.purlwise.data.sync.SyncWorker
import dagger.hilt.android.HiltAndroidApp
import java.util.concurrent.TimeUnit
import javax.inject.Inject

@HiltAndroidApp
class PurlwiseApp : Application(), Configuration.Provider {
    @Inject lateinit var workerFactory: HiltWorkerFactory

    override val workManagerConfiguration: Configuration
        get() = Configuration.Builder().setWorkerFactory(workerFactory).build()

    override fun onCreate() {
        super.onCreate()
        schedulePatternSync()
    }

    private fun schedulePatternSync() {
        val request = PeriodicWorkRequestBuilder<SyncWorker>(6, TimeUnit.HOURS)
            .setConstraints(Constraints.Builder().setRequiredNetworkType(NetworkType.CONNECTED).build())
            .build()
        WorkManager.getInstance(this)
            .enqueueUniquePeriodicWork(SyncWorker.UNIQUE_NAME, ExistingPeriodicWorkPolicy.KEEP, request)
    }
}
""",
    f"{SRC}/data/db/PurlDatabase.kt": """package app.purlwise.data.db

import androidx.room.AutoMigration
import androidx.room.Database
import androidx.room.RoomDatabase

@Database(
    entities = [Pattern::class, Counter::class, Yarn::class],
    version = 4,
    autoMigrations = [
        AutoMigration(from = 1, to = 2),
        AutoMigration(from = 3, to = 4),
    ],
)
abstract class PurlDatabase : RoomDatabase() {
    abstract fun counterDao(): CounterDao

    abstract fun patternDao(): PatternDao

    abstract fun stashDao(): StashDao
}
""",
    f"{SRC}/data/db/Entities.kt": """package app.purlwise.data.db

import androidx.room.ColumnInfo
import androidx.room.Entity
import androidx.room.ForeignKey
import androidx.room.PrimaryKey

@Entity(tableName = "patterns")
data class Pattern(
    @PrimaryKey val id: String,
    val title: String,
    val designer: String?,
    @ColumnInfo(name = "pdf_path") val pdfPath: String?,
    @ColumnInfo(name = "updated_at") val updatedAt: Long,
)

@Entity(
    tableName = "counters",
    foreignKeys = [
        ForeignKey(entity = Pattern::class, parentColumns = ["id"], childColumns = ["pattern_id"], onDelete = ForeignKey.SET_NULL),
    ],
)
data class Counter(
    @PrimaryKey(autoGenerate = true) val id: Long = 0,
    @ColumnInfo(name = "pattern_id", index = true) val patternId: String?,
    val name: String,
    val row: Int = 0,
    @ColumnInfo(name = "repeat_every") val repeatEvery: Int? = null,
    @ColumnInfo(name = "updated_at", defaultValue = "0") val updatedAt: Long = 0,
)

@Entity(tableName = "yarns")
data class Yarn(
    @PrimaryKey(autoGenerate = true) val id: Long = 0,
    val brand: String,
    val weight: String,
    @ColumnInfo(name = "meters_left") val metersLeft: Int,
    @ColumnInfo(name = "photo_file") val photoFile: String?,
)
""",
    f"{SRC}/data/db/CounterDao.kt": """package app.purlwise.data.db

import androidx.room.Dao
import androidx.room.Insert
import androidx.room.Query
import kotlinx.coroutines.flow.Flow

@Dao
interface CounterDao {
    @Query("SELECT * FROM counters WHERE id = :id")
    fun observe(id: Long): Flow<Counter>

    @Query("SELECT * FROM counters WHERE pattern_id = :patternId ORDER BY name")
    fun forPattern(patternId: String): Flow<List<Counter>>

    @Insert
    suspend fun insert(counter: Counter): Long

    @Query("UPDATE counters SET row = :row, updated_at = :now WHERE id = :id")
    suspend fun setRow(id: Long, row: Int, now: Long = System.currentTimeMillis())
}
""",
    f"{SRC}/data/db/Migrations.kt": """package app.purlwise.data.db

import androidx.room.migration.Migration
import androidx.sqlite.db.SupportSQLiteDatabase

/** 2 -> 3: counters.rows became counters.row, and the repeat moved from patterns to counters. */
val MIGRATION_2_3 = object : Migration(2, 3) {
    override fun migrate(db: SupportSQLiteDatabase) {
        db.execSQL("ALTER TABLE counters RENAME COLUMN rows TO row")
        db.execSQL("ALTER TABLE counters ADD COLUMN repeat_every INTEGER")
    }
}

val ALL_MIGRATIONS = arrayOf(MIGRATION_2_3)
""",
    f"{SRC}/data/sync/PatternApi.kt": """package app.purlwise.data.sync

import app.purlwise.data.sync.dto.PatternDto
import io.ktor.client.HttpClient
import io.ktor.client.call.body
import io.ktor.client.request.get
import io.ktor.client.request.parameter
import javax.inject.Inject
import kotlinx.serialization.Serializable

/** Incremental sync (3.2): the server answers with the patterns changed after an opaque cursor. */
@Serializable
data class SyncCursor(val token: String, val serverTime: Long)

@Serializable
data class ChangesPage(val patterns: List<PatternDto>, val next: SyncCursor)

class PatternApi @Inject constructor(private val client: HttpClient) {
    suspend fun changesSince(cursor: SyncCursor?): ChangesPage =
        client.get("v2/patterns/changes") { parameter("cursor", cursor?.token) }.body()
}
""",
    f"{SRC}/data/sync/dto/PatternDto.kt": """package app.purlwise.data.sync.dto

import kotlinx.serialization.Serializable

@Serializable
data class PatternDto(
    val id: String,
    val title: String,
    val designer: String? = null,
    val pdfUrl: String? = null,
    val updatedAt: Long,
)
""",
    f"{SRC}/data/sync/SyncWorker.kt": """package app.purlwise.data.sync

import android.content.Context
import androidx.hilt.work.HiltWorker
import androidx.work.Constraints
import androidx.work.CoroutineWorker
import androidx.work.NetworkType
import androidx.work.OneTimeWorkRequestBuilder
import androidx.work.OutOfQuotaPolicy
import androidx.work.WorkManager
import androidx.work.WorkerParameters
import dagger.assisted.Assisted
import dagger.assisted.AssistedInject
import io.ktor.client.plugins.ClientRequestException

@HiltWorker
class SyncWorker @AssistedInject constructor(
    @Assisted context: Context,
    @Assisted params: WorkerParameters,
    private val api: PatternApi,
    private val store: PatternStore,
) : CoroutineWorker(context, params) {
    override suspend fun doWork(): Result =
        try {
            val page = api.changesSince(store.syncCursor())
            store.apply(page.patterns)
            store.saveSyncCursor(page.next)
            Result.success()
        } catch (e: ClientRequestException) {
            if (e.response.status.value == 401) Result.failure() else Result.retry()
        }

    companion object {
        const val UNIQUE_NAME = "pattern-sync"

        /** The "Sync now" button in Settings: any network, expedited. */
        fun syncNow(context: Context) {
            val request = OneTimeWorkRequestBuilder<SyncWorker>()
                .setConstraints(Constraints.Builder().setRequiredNetworkType(NetworkType.CONNECTED).build())
                .setExpedited(OutOfQuotaPolicy.RUN_AS_NON_EXPEDITED_WORK_REQUEST)
                .build()
            WorkManager.getInstance(context).enqueue(request)
        }
    }
}
""",
    f"{SRC}/ui/AppScaffold.kt": """package app.purlwise.ui

import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.Scaffold
import androidx.compose.material3.SnackbarHost
import androidx.compose.material3.SnackbarHostState
import androidx.compose.runtime.Composable
import androidx.compose.runtime.CompositionLocalProvider
import androidx.compose.runtime.remember
import androidx.compose.runtime.staticCompositionLocalOf
import androidx.compose.ui.Modifier

/** The app's one SnackbarHostState. */
val LocalSnackbarHost = staticCompositionLocalOf<SnackbarHostState> { error("LocalSnackbarHost outside AppScaffold") }

@Composable
fun AppScaffold(content: @Composable () -> Unit) {
    val snackbarHost = remember { SnackbarHostState() }
    Scaffold(snackbarHost = { SnackbarHost(snackbarHost) }) { padding ->
        CompositionLocalProvider(LocalSnackbarHost provides snackbarHost) {
            Box(Modifier.padding(padding)) { content() }
        }
    }
}
""",
    f"{SRC}/ui/counter/CounterScreen.kt": """package app.purlwise.ui.counter

import androidx.compose.foundation.ExperimentalFoundationApi
import androidx.compose.foundation.combinedClickable
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.size
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import androidx.hilt.navigation.compose.hiltViewModel
import androidx.lifecycle.compose.collectAsStateWithLifecycle
import app.purlwise.R

@Composable
fun CounterRoute(viewModel: CounterViewModel = hiltViewModel()) {
    val state by viewModel.uiState.collectAsStateWithLifecycle()
    CounterScreen(
        state = state,
        onIncrement = viewModel::increment,
        onDecrement = viewModel::decrement,
        onReset = viewModel::reset,
    )
}

@OptIn(ExperimentalFoundationApi::class)
@Composable
fun CounterScreen(
    state: CounterUiState,
    onIncrement: () -> Unit,
    onDecrement: () -> Unit,
    onReset: () -> Unit,
) {
    Column(
        Modifier.fillMaxSize(),
        horizontalAlignment = Alignment.CenterHorizontally,
        verticalArrangement = Arrangement.Center,
    ) {
        Text(state.name, style = MaterialTheme.typography.titleLarge)
        Text(stringResource(R.string.counter_row, state.row), style = MaterialTheme.typography.displayLarge)
        state.repeatEvery?.let { Text(stringResource(R.string.counter_repeat, it), style = MaterialTheme.typography.bodyMedium) }
        Row(horizontalArrangement = Arrangement.spacedBy(24.dp)) {
            // long press on minus resets the counter
            Surface(
                shape = MaterialTheme.shapes.large,
                tonalElevation = 2.dp,
                modifier = Modifier.size(72.dp).combinedClickable(onClick = onDecrement, onLongClick = onReset),
            ) { Box(contentAlignment = Alignment.Center) { Text("\u2212", style = MaterialTheme.typography.headlineLarge) } }
            Surface(
                shape = MaterialTheme.shapes.large,
                tonalElevation = 2.dp,
                modifier = Modifier.size(72.dp).combinedClickable(onClick = onIncrement),
            ) { Box(contentAlignment = Alignment.Center) { Text("+", style = MaterialTheme.typography.headlineLarge) } }
        }
    }
}
""",
    f"{SRC}/ui/counter/CounterViewModel.kt": """package app.purlwise.ui.counter

import androidx.lifecycle.SavedStateHandle
import androidx.lifecycle.ViewModel
import androidx.lifecycle.viewModelScope
import app.purlwise.data.db.CounterDao
import dagger.hilt.android.lifecycle.HiltViewModel
import javax.inject.Inject
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.launch

data class CounterUiState(
    val name: String = "",
    val row: Int = 0,
    val repeatEvery: Int? = null,
)

@HiltViewModel
class CounterViewModel @Inject constructor(
    savedStateHandle: SavedStateHandle,
    private val dao: CounterDao,
) : ViewModel() {
    private val counterId: Long = checkNotNull(savedStateHandle["counterId"])

    val uiState: StateFlow<CounterUiState> = dao.observe(counterId)
        .map { CounterUiState(name = it.name, row = it.row, repeatEvery = it.repeatEvery) }
        .stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), CounterUiState())

    fun increment() = setRow(uiState.value.row + 1)

    fun decrement() = setRow((uiState.value.row - 1).coerceAtLeast(0))

    fun reset() = setRow(0)

    private fun setRow(row: Int) {
        viewModelScope.launch { dao.setRow(counterId, row) }
    }
}
""",
    "app/src/main/res/values/strings.xml": """<?xml version="1.0" encoding="utf-8"?>
<resources>
    <string name="app_name">Purlwise</string>
    <string name="counter_row">Row %1$d</string>
    <string name="counter_repeat">Repeat every %1$d rows</string>
    <string name="settings_sync_now">Sync now</string>
    <string name="settings_sync_interval">Patterns sync automatically every 6 hours.</string>
    <string name="stash_empty">Your stash is empty. Add a yarn with +.</string>
</resources>
""",
    "app/src/main/res/values-de/strings.xml": """<?xml version="1.0" encoding="utf-8"?>
<resources>
    <string name="app_name">Purlwise</string>
    <string name="counter_row">Reihe %1$d</string>
    <string name="counter_repeat">Rapport alle %1$d Reihen</string>
    <string name="settings_sync_now">Jetzt synchronisieren</string>
    <string name="settings_sync_interval">Anleitungen werden alle 6 Stunden automatisch synchronisiert.</string>
    <string name="stash_empty">Dein Garnvorrat ist leer. Füge mit + ein Garn hinzu.</string>
</resources>
""",
    "app/src/test/java/app/purlwise/MainDispatcherRule.kt": """package app.purlwise

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.test.TestDispatcher
import kotlinx.coroutines.test.UnconfinedTestDispatcher
import kotlinx.coroutines.test.resetMain
import kotlinx.coroutines.test.setMain
import org.junit.rules.TestWatcher
import org.junit.runner.Description

@OptIn(ExperimentalCoroutinesApi::class)
class MainDispatcherRule(private val dispatcher: TestDispatcher = UnconfinedTestDispatcher()) : TestWatcher() {
    override fun starting(description: Description) = Dispatchers.setMain(dispatcher)

    override fun finished(description: Description) = Dispatchers.resetMain()
}
""",
    "app/src/test/java/app/purlwise/data/db/FakeCounterDao.kt": """package app.purlwise.data.db

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.map

class FakeCounterDao(row: Int = 0, name: String = "Sleeve") : CounterDao {
    private val state = MutableStateFlow(Counter(id = 1, patternId = null, name = name, row = row))

    var row: Int
        get() = state.value.row
        set(value) {
            state.value = state.value.copy(row = value)
        }

    override fun observe(id: Long): Flow<Counter> = state

    override fun forPattern(patternId: String): Flow<List<Counter>> = state.map { listOf(it) }

    override suspend fun insert(counter: Counter): Long = counter.id

    override suspend fun setRow(id: Long, row: Int, now: Long) {
        this.row = row
    }
}
""",
    "app/src/test/java/app/purlwise/ui/counter/CounterViewModelTest.kt": """package app.purlwise.ui.counter

import androidx.lifecycle.SavedStateHandle
import app.cash.turbine.test
import app.purlwise.MainDispatcherRule
import app.purlwise.data.db.FakeCounterDao
import kotlinx.coroutines.test.runTest
import org.junit.Assert.assertEquals
import org.junit.Rule
import org.junit.Test

class CounterViewModelTest {
    @get:Rule val mainRule = MainDispatcherRule()

    private val dao = FakeCounterDao(row = 12)
    private val viewModel = CounterViewModel(SavedStateHandle(mapOf("counterId" to 1L)), dao)

    @Test
    fun `increment writes the next row`() = runTest {
        viewModel.uiState.test {
            skipItems(1)
            assertEquals(12, awaitItem().row)
            viewModel.increment()
            assertEquals(13, awaitItem().row)
        }
        assertEquals(13, dao.row)
    }

    @Test
    fun `decrement stops at zero`() = runTest {
        dao.row = 0
        viewModel.uiState.test {
            skipItems(2)
            viewModel.decrement()
            expectNoEvents()
        }
        assertEquals(0, dao.row)
    }
}
""",
    "app/src/androidTest/java/app/purlwise/data/db/MigrationTest.kt": """package app.purlwise.data.db

import androidx.room.testing.MigrationTestHelper
import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import org.junit.Assert.assertEquals
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith

@RunWith(AndroidJUnit4::class)
class MigrationTest {
    @get:Rule
    val helper = MigrationTestHelper(InstrumentationRegistry.getInstrumentation(), PurlDatabase::class.java)

    @Test
    fun migrate2To3_keepsTheRow() {
        helper.createDatabase(DB, 2).use { db ->
            db.execSQL("INSERT INTO counters (id, pattern_id, name, rows) VALUES (1, NULL, 'Sleeve', 41)")
        }
        helper.runMigrationsAndValidate(DB, 3, true, MIGRATION_2_3).use { db ->
            db.query("SELECT row FROM counters WHERE id = 1").use { c ->
                c.moveToFirst()
                assertEquals(41, c.getInt(0))
            }
        }
    }

    @Test
    fun migrate3To4_addsUpdatedAt() {
        helper.createDatabase(DB, 3).use { db ->
            db.execSQL("INSERT INTO counters (id, pattern_id, name, row) VALUES (1, NULL, 'Yoke', 7)")
        }
        helper.runMigrationsAndValidate(DB, 4, true).use { db ->
            db.query("SELECT row, updated_at FROM counters WHERE id = 1").use { c ->
                c.moveToFirst()
                assertEquals(7, c.getInt(0))
                assertEquals(0L, c.getLong(1))
            }
        }
    }

    private companion object {
        const val DB = "migration-test"
    }
}
""",
    "CHANGELOG.md": """# Changelog

All notable changes to Purlwise. Format: [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).

## [Unreleased]

### Added
- Incremental pattern sync: only patterns changed since the last sync are downloaded.

## [3.1.4] - 2026-10-02

### Fixed
- The pattern viewer no longer draws under the status bar on Android 15.

## [3.1.3] - 2026-09-11

### Fixed
- Stash photos taken in portrait were shown sideways.
""",
    "fastlane/metadata/android/en-US/changelogs/30104.txt": """• The pattern viewer no longer draws under the status bar on Android 15.
""",
    ".github/workflows/android.yml": """name: android
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-java@v4
        with: { distribution: temurin, java-version: 17 }
      - uses: gradle/actions/setup-gradle@v4
      - run: ./gradlew ktlintCheck detekt lintDebug testDebugUnitTest
""",
    ".github/workflows/release.yml": """name: release
on:
  push:
    tags: ["v*"]
jobs:
  play-internal:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-java@v4
        with: { distribution: temurin, java-version: 17 }
      - uses: gradle/actions/setup-gradle@v4
      - run: echo "${{ secrets.UPLOAD_KEYSTORE_B64 }}" | base64 -d > "$RUNNER_TEMP/upload.jks"
      - run: >-
          ./gradlew :app:bundleRelease
          -PPURLWISE_UPLOAD_STORE_FILE="$RUNNER_TEMP/upload.jks"
          -PPURLWISE_UPLOAD_STORE_PASSWORD="${{ secrets.UPLOAD_STORE_PASSWORD }}"
      - uses: r0adkll/upload-google-play@v1
        with:
          serviceAccountJsonPlainText: ${{ secrets.PLAY_SERVICE_ACCOUNT }}
          packageName: app.purlwise
          releaseFiles: app/build/outputs/bundle/release/app-release.aab
          track: internal
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


# Session 1: undo for an accidental counter reset, its test, a device install, a commit.
session("counter-undo")
user(
    "long press on minus resets the counter to 0 and ppl hit it by accident and lose their row. add an undo snackbar after a reset pls"
)
bash("git status --short", "Check the working tree", note="routine")
bash(f"ls {SRC}/ui {SRC}/ui/counter", "Look at the ui package", note="routine")
read(f"{SRC}/ui/counter/CounterViewModel.kt", "pw_viewmodel_state", "pw_counter_persist", note="the counter's state")
read(
    f"{SRC}/ui/counter/CounterScreen.kt",
    "pw_viewmodel_state",
    "pw_snackbar_host",
    "pw_strings_de",
    note="the counter screen",
)
read(
    f"{SRC}/ui/AppScaffold.kt",
    "pw_snackbar_host",
    note="where the app's snackbar host lives",
    uses=("pw_snackbar_host",),
)
edit(
    f"{SRC}/ui/counter/CounterViewModel.kt",
    """import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.launch

data class CounterUiState(
    val name: String = "",
    val row: Int = 0,
    val repeatEvery: Int? = null,
)

@HiltViewModel
class CounterViewModel @Inject constructor(
    savedStateHandle: SavedStateHandle,
    private val dao: CounterDao,
) : ViewModel() {
    private val counterId: Long = checkNotNull(savedStateHandle["counterId"])

    val uiState: StateFlow<CounterUiState> = dao.observe(counterId)
        .map { CounterUiState(name = it.name, row = it.row, repeatEvery = it.repeatEvery) }
        .stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), CounterUiState())

    fun increment() = setRow(uiState.value.row + 1)

    fun decrement() = setRow((uiState.value.row - 1).coerceAtLeast(0))

    fun reset() = setRow(0)
""",
    """import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.combine
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.launch

data class CounterUiState(
    val name: String = "",
    val row: Int = 0,
    val repeatEvery: Int? = null,
    /** The row before a reset while its undo snackbar is showing. */
    val undoRow: Int? = null,
)

@HiltViewModel
class CounterViewModel @Inject constructor(
    savedStateHandle: SavedStateHandle,
    private val dao: CounterDao,
) : ViewModel() {
    private val counterId: Long = checkNotNull(savedStateHandle["counterId"])
    private val undoRow = MutableStateFlow<Int?>(null)

    val uiState: StateFlow<CounterUiState> = combine(dao.observe(counterId), undoRow) { counter, undo ->
        CounterUiState(name = counter.name, row = counter.row, repeatEvery = counter.repeatEvery, undoRow = undo)
    }.stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), CounterUiState())

    fun increment() = setRow(uiState.value.row + 1)

    fun decrement() = setRow((uiState.value.row - 1).coerceAtLeast(0))

    fun reset() {
        val before = uiState.value.row
        if (before == 0) return
        undoRow.value = before
        setRow(0)
    }

    fun undoReset() {
        undoRow.value?.let(::setRow)
        undoRow.value = null
    }

    fun undoDismissed() {
        undoRow.value = null
    }
""",
    "pw_viewmodel_state",
    "pw_counter_persist",
    note="remember the row before a reset; undo writes it back through the DAO",
)
edit(
    f"{SRC}/ui/counter/CounterScreen.kt",
    """import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import androidx.hilt.navigation.compose.hiltViewModel
import androidx.lifecycle.compose.collectAsStateWithLifecycle
import app.purlwise.R

@Composable
fun CounterRoute(viewModel: CounterViewModel = hiltViewModel()) {
    val state by viewModel.uiState.collectAsStateWithLifecycle()
""",
    """import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.SnackbarDuration
import androidx.compose.material3.SnackbarResult
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import androidx.hilt.navigation.compose.hiltViewModel
import androidx.lifecycle.compose.collectAsStateWithLifecycle
import app.purlwise.R
import app.purlwise.ui.LocalSnackbarHost

@Composable
fun CounterRoute(viewModel: CounterViewModel = hiltViewModel()) {
    val state by viewModel.uiState.collectAsStateWithLifecycle()
    val snackbarHost = LocalSnackbarHost.current
    val message = stringResource(R.string.counter_reset_done)
    val undoLabel = stringResource(R.string.counter_undo)
    LaunchedEffect(state.undoRow) {
        if (state.undoRow == null) return@LaunchedEffect
        val result = snackbarHost.showSnackbar(message, actionLabel = undoLabel, duration = SnackbarDuration.Long)
        if (result == SnackbarResult.ActionPerformed) viewModel.undoReset() else viewModel.undoDismissed()
    }
""",
    "pw_snackbar_host",
    "pw_strings_de",
    "pw_viewmodel_state",
    note="show the undo snackbar through the app's host",
    uses=("pw_snackbar_host",),
)
read("app/src/main/res/values/strings.xml", "pw_strings_de", note="the English strings")
edit(
    "app/src/main/res/values/strings.xml",
    """    <string name="counter_repeat">Repeat every %1$d rows</string>
""",
    """    <string name="counter_repeat">Repeat every %1$d rows</string>
    <string name="counter_reset_done">Counter reset to 0</string>
    <string name="counter_undo">Undo</string>
""",
    "pw_strings_de",
    note="the snackbar's strings",
)
read("app/src/main/res/values-de/strings.xml", "pw_strings_de", note="the German strings", uses=("pw_strings_de",))
edit(
    "app/src/main/res/values-de/strings.xml",
    """    <string name="counter_repeat">Rapport alle %1$d Reihen</string>
""",
    """    <string name="counter_repeat">Rapport alle %1$d Reihen</string>
    <string name="counter_reset_done">Zähler auf 0 zurückgesetzt</string>
    <string name="counter_undo">Rückgängig</string>
""",
    "pw_strings_de",
    note="the German translations",
    uses=("pw_strings_de",),
)
bash("./gradlew :app:compileDebugKotlin -q", "Compile the app", note="routine")
answer(
    "After a long-press reset the counter screen now shows 'Counter reset to 0' with an Undo action (through the app's "
    "LocalSnackbarHost, no second Scaffold). Undo writes the previous row back through CounterDao.setRow, so it survives "
    "the app being killed. New strings are in values/ and values-de/.",
    "pw_snackbar_host",
    "pw_strings_de",
    "pw_counter_persist",
)
user("add a unit test for the undo and run the tests. ktlint too")
read(
    "app/src/test/java/app/purlwise/ui/counter/CounterViewModelTest.kt",
    "pw_turbine_tests",
    "pw_main_dispatcher",
    note="the existing ViewModel tests",
)
read("app/src/test/java/app/purlwise/data/db/FakeCounterDao.kt", note="the fake the tests use")
edit(
    "app/src/test/java/app/purlwise/ui/counter/CounterViewModelTest.kt",
    """            viewModel.decrement()
            expectNoEvents()
        }
        assertEquals(0, dao.row)
    }
""",
    """            viewModel.decrement()
            expectNoEvents()
        }
        assertEquals(0, dao.row)
    }

    @Test
    fun `undo after a reset writes the old row back`() = runTest {
        viewModel.uiState.test {
            skipItems(2)
            viewModel.reset()
            assertEquals(12, awaitItem().undoRow)
            assertEquals(0, awaitItem().row)
            viewModel.undoReset()
            cancelAndIgnoreRemainingEvents()
        }
        assertEquals(12, dao.row)
    }
""",
    "pw_turbine_tests",
    "pw_main_dispatcher",
    "pw_counter_persist",
    note="the undo test, in the file's Turbine style",
)
bash(
    "./gradlew :app:testDebugUnitTest --tests 'app.purlwise.ui.counter.CounterViewModelTest'",
    "Run the ViewModel tests",
    note="routine",
)
bash(
    "./gradlew ktlintCheck detekt lintDebug testDebugUnitTest",
    "Run ktlint and the rest of what CI checks",
    "pw_ci_checks",
    note="the user asked for ktlint; CI also runs detekt, lint and all unit tests",
    uses=("pw_ci_checks",),
)
answer(
    "Added `undo after a reset writes the old row back`; CounterViewModelTest passes, and ktlintCheck, detekt, lintDebug and "
    "the whole unit-test suite are green, which is everything CI runs.",
    "pw_ci_checks",
)
user("put it on my phone, its plugged in")
bash("adb devices", "List connected devices", note="routine")
bash("./gradlew :app:installDebug", "Install the debug build", note="routine")
answer("Installed the debug build on your phone (Pixel 8, the only device attached).")
user("ok works. commit on a new branch counter-undo, issue is #231")
bash("git diff --stat", "See what changed", note="routine")
bash("git checkout -b counter-undo", "Create the branch", note="routine")
bash(
    "git add -A && git commit -q -m 'counter: offer undo after a long-press reset' -m 'Refs #231' && git log --oneline -1",
    "Commit the undo",
    "pw_commit_style",
    note="commit",
    uses=("pw_commit_style",),
)
answer(
    "Committed on counter-undo: `counter: offer undo after a long-press reset` (body: Refs #231).", "pw_commit_style"
)


# Session 2: notes on counters (schema change), the migration test, then the UI.
session("counter-notes")
user("counters need a notes field (optional free text). db side + dao for now, ui later")
bash("git pull --ff-only", "Update the branch", note="routine")
read(f"{SRC}/data/db/Entities.kt", "pw_room_migrations", "pw_room_notnull", note="the Counter entity")
read(
    f"{SRC}/data/db/PurlDatabase.kt",
    "pw_room_migrations",
    "pw_room_notnull",
    "pw_schema_json",
    "pw_migration_test",
    note="the database version and its migrations",
)
edit(
    f"{SRC}/data/db/Entities.kt",
    """    @ColumnInfo(name = "repeat_every") val repeatEvery: Int? = null,
""",
    """    @ColumnInfo(name = "repeat_every") val repeatEvery: Int? = null,
    val notes: String? = null,
""",
    "pw_room_migrations",
    "pw_room_notnull",
    note="a nullable column",
)
edit(
    f"{SRC}/data/db/PurlDatabase.kt",
    """    version = 4,
    autoMigrations = [
        AutoMigration(from = 1, to = 2),
        AutoMigration(from = 3, to = 4),
    ],
""",
    """    version = 5,
    autoMigrations = [
        AutoMigration(from = 1, to = 2),
        AutoMigration(from = 3, to = 4),
        AutoMigration(from = 4, to = 5),
    ],
""",
    "pw_room_migrations",
    "pw_schema_json",
    "pw_migration_test",
    note="version 5 with an AutoMigration",
    uses=("pw_room_migrations",),
)
read(f"{SRC}/data/db/CounterDao.kt", note="the DAO")
edit(
    f"{SRC}/data/db/CounterDao.kt",
    """    suspend fun setRow(id: Long, row: Int, now: Long = System.currentTimeMillis())
""",
    """    suspend fun setRow(id: Long, row: Int, now: Long = System.currentTimeMillis())

    @Query("UPDATE counters SET notes = :notes, updated_at = :now WHERE id = :id")
    suspend fun setNotes(id: Long, notes: String?, now: Long = System.currentTimeMillis())
""",
    note="write the notes",
)
read("app/src/test/java/app/purlwise/data/db/FakeCounterDao.kt", note="the fake implements the DAO")
edit(
    "app/src/test/java/app/purlwise/data/db/FakeCounterDao.kt",
    """    override suspend fun setRow(id: Long, row: Int, now: Long) {
        this.row = row
    }
""",
    """    override suspend fun setRow(id: Long, row: Int, now: Long) {
        this.row = row
    }

    override suspend fun setNotes(id: Long, notes: String?, now: Long) {
        state.value = state.value.copy(notes = notes)
    }
""",
    note="keep the fake compiling",
)
read(
    "app/src/androidTest/java/app/purlwise/data/db/MigrationTest.kt",
    "pw_migration_test",
    note="the migration tests",
    uses=("pw_migration_test",),
)
edit(
    "app/src/androidTest/java/app/purlwise/data/db/MigrationTest.kt",
    """    private companion object {
""",
    """    @Test
    fun migrate4To5_addsNotes() {
        helper.createDatabase(DB, 4).use { db ->
            db.execSQL("INSERT INTO counters (id, pattern_id, name, row, updated_at) VALUES (1, NULL, 'Body', 88, 0)")
        }
        helper.runMigrationsAndValidate(DB, 5, true).use { db ->
            db.query("SELECT row, notes FROM counters WHERE id = 1").use { c ->
                c.moveToFirst()
                assertEquals(88, c.getInt(0))
                assertEquals(null, c.getString(1))
            }
        }
    }

    private companion object {
""",
    "pw_migration_test",
    note="a 4 -> 5 case",
    uses=("pw_migration_test",),
)
bash(
    "./gradlew :app:assembleDebug :app:compileDebugUnitTestKotlin -q",
    "Build; KSP writes the version 5 schema",
    "pw_schema_json",
    note="build",
)
bash("git status --short", "See the changed and new files", note="routine")
answer(
    "Counter has a nullable `notes` column; the database is at version 5 with AutoMigration(4 -> 5) (nullable, so no default "
    "is needed), CounterDao.setNotes writes it, and MigrationTest has migrate4To5_addsNotes. The build wrote "
    "app/schemas/app.purlwise.data.db.PurlDatabase/5.json: commit it with the change.",
    "pw_room_migrations",
    "pw_room_notnull",
    "pw_schema_json",
    "pw_migration_test",
)
user("emulator is up, run the migration test")
bash("adb devices", "Check the emulator", note="routine")
bash(
    "./gradlew :app:connectedDebugAndroidTest -Pandroid.testInstrumentationRunnerArguments.class=app.purlwise.data.db.MigrationTest",
    "Run MigrationTest on the emulator",
    "pw_schema_assets",
    note="fails: 'Cannot find the schema file in the assets folder'",
)
read("app/build.gradle.kts", "pw_schema_assets", note="the androidTest source sets", uses=("pw_schema_assets",))
edit(
    "app/build.gradle.kts",
    """    buildFeatures { compose = true }
""",
    """    buildFeatures { compose = true }

    // MigrationTest reads the exported Room schemas from the test assets
    sourceSets {
        getByName("androidTest").assets.srcDir("$projectDir/schemas")
    }
""",
    "pw_schema_assets",
    note="put the schemas in the test assets",
    uses=("pw_schema_assets",),
)
bash(
    "./gradlew :app:connectedDebugAndroidTest -Pandroid.testInstrumentationRunnerArguments.class=app.purlwise.data.db.MigrationTest",
    "Run MigrationTest again",
    note="routine rerun",
)
answer(
    "MigrationTest first failed with 'Cannot find the schema file in the assets folder': app/build.gradle.kts no longer "
    "added app/schemas to the androidTest assets. With that back, all three migration tests (2->3, 3->4, 4->5) pass on the emulator.",
    "pw_schema_assets",
)
user("now the ui: show the notes under the counter name, small grey text, nothing if empty")
read(f"{SRC}/ui/counter/CounterScreen.kt", "pw_theme_colors", "pw_viewmodel_state", note="the screen")
read(f"{SRC}/ui/counter/CounterViewModel.kt", "pw_viewmodel_state", note="the UI state")
edit(
    f"{SRC}/ui/counter/CounterViewModel.kt",
    """    val repeatEvery: Int? = null,
    /** The row before a reset while its undo snackbar is showing. */
    val undoRow: Int? = null,
)

@HiltViewModel
class CounterViewModel @Inject constructor(
    savedStateHandle: SavedStateHandle,
    private val dao: CounterDao,
) : ViewModel() {
    private val counterId: Long = checkNotNull(savedStateHandle["counterId"])
    private val undoRow = MutableStateFlow<Int?>(null)

    val uiState: StateFlow<CounterUiState> = combine(dao.observe(counterId), undoRow) { counter, undo ->
        CounterUiState(name = counter.name, row = counter.row, repeatEvery = counter.repeatEvery, undoRow = undo)
""",
    """    val repeatEvery: Int? = null,
    val notes: String? = null,
    /** The row before a reset while its undo snackbar is showing. */
    val undoRow: Int? = null,
)

@HiltViewModel
class CounterViewModel @Inject constructor(
    savedStateHandle: SavedStateHandle,
    private val dao: CounterDao,
) : ViewModel() {
    private val counterId: Long = checkNotNull(savedStateHandle["counterId"])
    private val undoRow = MutableStateFlow<Int?>(null)

    val uiState: StateFlow<CounterUiState> = combine(dao.observe(counterId), undoRow) { counter, undo ->
        CounterUiState(
            name = counter.name,
            row = counter.row,
            repeatEvery = counter.repeatEvery,
            notes = counter.notes,
            undoRow = undo,
        )
""",
    "pw_viewmodel_state",
    note="notes in the UI state",
)
edit(
    f"{SRC}/ui/counter/CounterScreen.kt",
    """        Text(state.name, style = MaterialTheme.typography.titleLarge)
""",
    """        Text(state.name, style = MaterialTheme.typography.titleLarge)
        if (!state.notes.isNullOrBlank()) {
            Text(
                state.notes,
                style = MaterialTheme.typography.bodySmall,
                color = MaterialTheme.colorScheme.onSurfaceVariant,
            )
        }
""",
    "pw_theme_colors",
    "pw_viewmodel_state",
    note="grey = onSurfaceVariant, not Color.Gray",
    uses=("pw_theme_colors",),
)
bash("./gradlew :app:compileDebugKotlin -q", "Compile", note="routine")
answer(
    "The counter screen shows the notes under the name in bodySmall with colorScheme.onSurfaceVariant (the theme's grey, "
    "so it works in the dark theme too), and nothing when the notes are empty.",
    "pw_theme_colors",
)


# Session 3: release 3.2.0.
session("release-3.2.0")
user("cut 3.2.0 - bump the version + changelog")
bash(
    "git checkout main && git pull --ff-only && git log --oneline v3.1.4..HEAD",
    "What went in since 3.1.4",
    note="routine",
)
read("app/build.gradle.kts", "pw_version_code", note="the version", uses=("pw_version_code",))
edit(
    "app/build.gradle.kts",
    """        versionCode = 30104
        versionName = "3.1.4"
""",
    """        versionCode = 30200
        versionName = "3.2.0"
""",
    "pw_version_code",
    note="30200 for 3.2.0",
    uses=("pw_version_code",),
)
read("CHANGELOG.md", "pw_changelog", note="the changelog")
edit(
    "CHANGELOG.md",
    """## [Unreleased]

### Added
- Incremental pattern sync: only patterns changed since the last sync are downloaded.
""",
    """## [Unreleased]

## [3.2.0] - 2026-11-28

### Added
- Incremental pattern sync: only patterns changed since the last sync are downloaded.
- Undo after resetting a counter with a long press.
- Notes on counters.
""",
    "pw_changelog",
    note="move Unreleased under 3.2.0",
)
bash(
    "cat > fastlane/metadata/android/en-US/changelogs/30200.txt <<'EOF'\n"
    "• Reset a counter by accident? Tap Undo.\n"
    "• Add notes to your counters.\n"
    "• Faster sync: only changed patterns are downloaded.\n"
    "EOF",
    "Write Play's What's new for 30200",
    "pw_changelog",
    "pw_version_code",
    note="fastlane changelog named after the versionCode",
    uses=("pw_changelog", "pw_version_code"),
)
answer(
    "Version is 3.2.0 (versionCode 30200). CHANGELOG.md has a 3.2.0 section with sync, undo and notes, and "
    "fastlane/metadata/android/en-US/changelogs/30200.txt has the Play 'What's new' text (well under 500 characters).",
    "pw_version_code",
    "pw_changelog",
)
user("before i tag: build a minified release and make sure pattern sync doesnt crash like it did in 3.1.0")
read("app/proguard-rules.pro", "pw_r8_serialization", note="the R8 keep rules", uses=("pw_r8_serialization",))
bash(
    "grep -rn '@Serializable' app/src/main/java",
    "Find serializable classes",
    "pw_r8_serialization",
    note="any outside data/sync/dto?",
    uses=("pw_r8_serialization",),
)
edit(
    "app/proguard-rules.pro",
    """
# ACRA
""",
    """
# the incremental-sync classes live outside dto
-keep,includedescriptorclasses class app.purlwise.data.sync.SyncCursor$$serializer { *; }
-keep,includedescriptorclasses class app.purlwise.data.sync.ChangesPage$$serializer { *; }
-keepclassmembers class app.purlwise.data.sync.SyncCursor, app.purlwise.data.sync.ChangesPage {
    *** Companion;
    kotlinx.serialization.KSerializer serializer(...);
}

# ACRA
""",
    "pw_r8_serialization",
    note="keep rules for the new classes",
    uses=("pw_r8_serialization",),
)
bash(
    "./gradlew :app:assembleRelease",
    "Build the minified release",
    "pw_r8_serialization",
    "pw_release_signing",
    note="build",
)
bash("adb install -r app/build/outputs/apk/release/app-release.apk", "Install the release build", note="routine")
bash(
    "adb logcat -c && adb shell am start -W -n app.purlwise/.MainActivity && sleep 20 && "
    "(adb logcat -d | grep -E \"Serializer for class|FATAL EXCEPTION\" || echo 'no crash')",
    "Open the app, let it sync, look for the crash",
    "pw_r8_serialization",
    note="the 3.1.0 crash text",
    uses=("pw_r8_serialization",),
)
answer(
    "Found it before it shipped: the new SyncCursor and ChangesPage in data/sync/PatternApi.kt are @Serializable but outside "
    "data/sync/dto, so R8 would have stripped their serializers (the 3.1.0 crash). proguard-rules.pro now keeps them; the "
    "minified release syncs on the emulator with no 'Serializer for class' error.",
    "pw_r8_serialization",
)
user("good. commit + tag v3.2.0")
bash("git status --short", "See what is uncommitted", note="routine")
bash(
    "git add -A && git commit -q -m 'release: 3.2.0' -m 'Keep the serializers of the incremental-sync classes.'",
    "Commit the release",
    "pw_commit_style",
    note="commit",
    uses=("pw_commit_style",),
)
bash(
    "git tag -a v3.2.0 -m 'purlwise 3.2.0'",
    "Tag the release",
    "pw_release_tag",
    note="annotated tag",
    uses=("pw_release_tag",),
)
answer(
    "Committed `release: 3.2.0` and tagged v3.2.0 (annotated). Nothing is pushed yet: `git push origin main v3.2.0` starts "
    "release.yml, which builds the bundle and uploads it to the Play internal track.",
    "pw_release_tag",
    "pw_commit_style",
)


# Session 4: sync only on unmetered networks (the #212 decision).
session("sync-metered")
user("users on mobile data say sync eats their data plan. do what we agreed in #212")
bash("git checkout -b sync-unmetered", "New branch", note="routine")
call(
    "memory_search",
    {"query": "#212 sync data usage metered"},
    "pw_sync_interval_new",
    "pw_unique_work_update",
    note="what #212 decided",
)
read(f"{SRC}/data/sync/SyncWorker.kt", "pw_sync_interval_new", note="the worker and Sync now")
read(
    f"{SRC}/PurlwiseApp.kt",
    "pw_sync_interval_new",
    "pw_unique_work_update",
    note="where the periodic sync is scheduled",
)
edit(
    f"{SRC}/PurlwiseApp.kt",
    """        val request = PeriodicWorkRequestBuilder<SyncWorker>(6, TimeUnit.HOURS)
            .setConstraints(Constraints.Builder().setRequiredNetworkType(NetworkType.CONNECTED).build())
            .build()
        WorkManager.getInstance(this)
            .enqueueUniquePeriodicWork(SyncWorker.UNIQUE_NAME, ExistingPeriodicWorkPolicy.KEEP, request)
""",
    """        // #212: every 12 h and only on unmetered networks; "Sync now" in Settings still uses any network
        val request = PeriodicWorkRequestBuilder<SyncWorker>(12, TimeUnit.HOURS)
            .setConstraints(Constraints.Builder().setRequiredNetworkType(NetworkType.UNMETERED).build())
            .build()
        // UPDATE, not KEEP: installed apps must pick up the new interval and constraint
        WorkManager.getInstance(this)
            .enqueueUniquePeriodicWork(SyncWorker.UNIQUE_NAME, ExistingPeriodicWorkPolicy.UPDATE, request)
""",
    "pw_sync_interval_new",
    "pw_unique_work_update",
    note="12 h, unmetered, UPDATE",
    uses=("pw_sync_interval_new", "pw_unique_work_update"),
)
bash("./gradlew :app:testDebugUnitTest", "Run the unit tests", note="routine")
answer(
    "Periodic sync now runs every 12 hours and only on unmetered networks, as agreed in #212; the schedule is enqueued "
    "with ExistingPeriodicWorkPolicy.UPDATE so existing installs get the new constraint. 'Sync now' in Settings still "
    "works on mobile data. Unit tests pass.",
    "pw_sync_interval_new",
    "pw_unique_work_update",
)
user("diff ok? commit it, ref the issue")
bash("git diff", "Show the diff", note="routine")
bash(
    "git commit -qam 'sync: sync patterns every 12 h on unmetered networks only' -m 'Refs #212' && git log --oneline -1",
    "Commit",
    "pw_commit_style",
    note="commit",
    uses=("pw_commit_style",),
)
answer(
    "Diff is just PurlwiseApp.kt. Committed `sync: sync patterns every 12 h on unmetered networks only`, Refs #212 in the body.",
    "pw_commit_style",
)


# Session 5: small chores that need no memory at all (every step's `relevant` is empty).
session("chores")
user("whats our applicationId, and the minSdk?")
read("app/build.gradle.kts", note="look it up")
answer("applicationId is app.purlwise, minSdk 26 (targetSdk and compileSdk 35).")
user("theres a typo in the readme, 'Pattens'. fix")
bash("grep -n 'Pattens' README.md", "Find the typo", note="find it")
read("README.md", note="the line")
edit(
    "README.md",
    "- Pattens, counters and the stash",
    "- Patterns, counters and the stash",
    note="fix it",
)
answer("Fixed: README.md now says 'Patterns, counters and the stash'.")
user("bump the ktlint gradle plugin to 12.1.2")
read("gradle/libs.versions.toml", note="the version catalog")
edit("gradle/libs.versions.toml", 'ktlint = "12.1.1"', 'ktlint = "12.1.2"', note="bump")
answer("ktlint plugin is 12.1.2 in gradle/libs.versions.toml.")
user("how many kotlin files under ui/ ?")
bash(f"find {SRC}/ui -name '*.kt' | wc -l", "Count the Kotlin files", note="count")
answer("3: AppScaffold.kt, counter/CounterScreen.kt and counter/CounterViewModel.kt.")
user("what jvmargs does gradle.properties give the daemon")
read("gradle.properties", note="look it up")
answer("-Xmx3g -Dfile.encoding=UTF-8.")
user("last 5 commits?")
bash("git log --oneline -5", "Show the last commits", note="look")
answer(
    "Newest first: `sync: sync patterns every 12 h on unmetered networks only`, then `release: 3.2.0` and the three before it, as printed above."
)


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
                "tags": ["purlwise", *tags.split(",")],
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
        "project": "purlwise",
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
