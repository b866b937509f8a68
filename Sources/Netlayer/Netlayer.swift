/// Library-wide constants.
public enum Netlayer {
    /// "MAJOR.MINOR.PATCH"; the C header's `NL_VERSION_STRING` must match.
    public static let version = "0.1.0"
    /// The C ABI and JSON contract version (`NL_ABI_VERSION`).
    public static let abiVersion = 1
}
