// swift-tools-version:6.0
// Mailbox: an embedded, actor-based, message-driven runtime with ReactiveSwift-style streams.
// Zero third-party packages: only the toolchain's modules (stdlib, Synchronization, Dispatch,
// Foundation, Distributed). Do not add `dependencies:`.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Mailbox",
    products: [
        .library(name: "Mailbox", targets: ["Mailbox"]),
        .library(name: "MailboxTestKit", targets: ["MailboxTestKit"]),
        .executable(name: "mailbox-bench", targets: ["MailboxBenchmarks"]),
    ],
    targets: [
        .target(
            name: "Mailbox",
            path: "Sources/Mailbox",
            swiftSettings: strictSettings
        ),
        .target(
            name: "MailboxTestKit",
            dependencies: ["Mailbox"],
            path: "Sources/MailboxTestKit",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "MailboxBenchmarks",
            dependencies: ["Mailbox"],
            path: "Sources/MailboxBenchmarks",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxTests",
            dependencies: ["Mailbox"],
            path: "Tests/MailboxTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FaultInjectionTests",
            dependencies: ["Mailbox", "MailboxTestKit"],
            path: "Tests/FaultInjectionTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxTestKitTests",
            dependencies: ["Mailbox", "MailboxTestKit"],
            path: "Tests/MailboxTestKitTests",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
