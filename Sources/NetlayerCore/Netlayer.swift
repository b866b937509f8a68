import NetlayerJSON

/// Library-wide constants.
public enum Netlayer {
    /// "MAJOR.MINOR.PATCH": a copy of the file VERSION, as is the C header's
    /// `NL_VERSION_STRING` (scripts/set-version writes both; a ctest test compares them).
    public static let version = "0.1.0"
    /// The C ABI and JSON contract version (`NL_ABI_VERSION`).
    public static let abiVersion = 1
}
