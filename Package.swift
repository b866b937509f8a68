// swift-tools-version:6.1
import PackageDescription

/// Link flags that make `libnetlayer.so` self-contained and tidy:
/// the Swift runtime and FoundationEssentials are linked statically (with the few
/// support archives their autolink entries forget), the soname is versioned, only
/// `nl_` symbols are exported, and `-z defs` turns a missing archive into a link
/// error instead of a failure at `dlopen` time.
let cLibraryLinkFlags: [String] = [
    "-static-stdlib",
    "-Xlinker", "-soname=libnetlayer.so.1",
    "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/NetlayerC/exports.map",
] + (Context.environment["NETLAYER_SANITIZER_BUILD"] == nil ? ["-Xlinker", "-zdefs"] : [])
// A sanitizer build (scripts/test-asan) leaves the runtime's symbols to the executable.

let openCombine: [Target.Dependency] = [
    .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["Combine"])),
]

let package = Package(
    name: "Netlayer",
    products: [
        .library(name: "netlayer", type: .dynamic, targets: ["NetlayerC"]),
        .library(name: "Netlayer", targets: ["Netlayer"]),
        .library(name: "NetlayerCombine", targets: ["NetlayerCombine"]),
    ],
    // NetlayerCombine's publishers need Combine's API, which Linux gets from OpenCombine.
    // Only a build that enables this trait resolves OpenCombine: the core and the C
    // library (and so the CMake build) depend on no other package. A Package.resolved
    // that pins OpenCombine (from such a build in the same tree) is fetched anyway.
    traits: [
        .trait(name: "Combine", description: "NetlayerCombine's publishers on Linux, through OpenCombine"),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libyaml reads YAML OpenAPI documents: a system library rather than Yams or
        // OpenAPIKit, so that the C library's build resolves no Swift package.
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // wslay (Debian's libwslay-dev) frames WebSocket messages (RFC 6455) over a
        // connection libcurl made: libcurl 7.88 has no ws:// of its own, and wslay does
        // no I/O, so the client's connection settings (TLS, proxy, Unix socket) apply.
        // Linked by name, like RE2: Debian ships no wslay.pc. libcrypto (OpenSSL) gives
        // the handshake's SHA-1 and zlib permessage-deflate; libcurl needs both already.
        .systemLibrary(
            name: "CWslay",
            providers: [.apt(["libwslay-dev", "libssl-dev", "zlib1g-dev"])]
        ),
        // RE2 (Debian's libre2-dev) matches schema `pattern`s in time linear in the text,
        // where a backtracking engine can take exponential time on a value a server
        // sends. Its API is C++: CRegex wraps the few calls the validator needs in C
        // functions. Linked by name: re2.pc adds only -pthread, which SwiftPM refuses
        // from pkg-config with a warning on every build.
        .target(
            name: "CRegex",
            linkerSettings: [.linkedLibrary("re2")]
        ),
        // One target per layer; a dependency can only point down this list, which the
        // compiler enforces (a module cannot import what its target does not depend on).
        // NetlayerJSON: the JSON value, parser and writer (a data format, no HTTP).
        .target(name: "NetlayerJSON"),
        // The core: Endpoint -> HTTPRequest -> NetlayerClient -> RequestAttempts ->
        // HTTPResponse, the errors, and the protocols what plugs in implements
        // (transport, URL parsing, interceptor, cache, logger, decoder). No libcurl, no
        // documents, no OpenAPI (Tests/check_layers.py checks the graph).
        .target(name: "NetlayerCore", dependencies: ["NetlayerJSON"]),
        // The libcurl transport: one multi handle (one connection pool) per client.
        .target(name: "NetlayerCurl", dependencies: ["NetlayerCore", "CCurl", "CWslay"]),
        // What a request may opt into: response cache, logging and redaction of bodies,
        // stub and cassette transports.
        .target(name: "NetlayerFeatures", dependencies: ["NetlayerCore"]),
        // The JSON documents of the C ABI (config, endpoint, result) and OpenAPI.
        .target(name: "NetlayerDocuments", dependencies: ["NetlayerCore", "NetlayerFeatures", "CYAML", "CRegex"]),
        // What Swift users import: every layer, the seeds' vocabulary (NetworkService,
        // DataTransferService, ...) as a facade over the client, and clients made from
        // config documents over libcurl.
        .target(name: "Netlayer",
                dependencies: ["NetlayerJSON", "NetlayerCore", "NetlayerCurl", "NetlayerFeatures", "NetlayerDocuments"]),
        .target(
            name: "NetlayerC",
            dependencies: ["Netlayer"],
            exclude: ["exports.map"],
            linkerSettings: [
                .linkedLibrary("_FoundationCollections"),
                .linkedLibrary("_FoundationCShims"),
                .linkedLibrary("swiftSynchronization"),
                .unsafeFlags(cLibraryLinkFlags),
            ]
        ),
        .target(
            name: "NetlayerCombine",
            dependencies: ["Netlayer"] + openCombine
        ),
        .testTarget(
            name: "NetlayerTests",
            dependencies: ["Netlayer", "NetlayerCombine"] + openCombine,
            // Data files the tests read by their #filePath, not bundled resources.
            exclude: ["Resources"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
