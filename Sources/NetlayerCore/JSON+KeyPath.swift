import NetlayerJSON

extension JSON {
    /// The sub-value at a dot-separated key path: object keys by name, array elements
    /// by numeric index ("results.0.title"). An empty path is the value itself.
    ///
    /// - Throws: `DataTransferError.parsing` naming the first part that is missing.
    public func value(atKeyPath keyPath: String) throws(DataTransferError) -> JSON {
        if keyPath.isEmpty { return self }
        var current = self
        var walked: [Substring] = []
        for part in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            let location = walked.isEmpty ? "the top level" : "'\(walked.joined(separator: "."))'"
            switch current {
            case .object(let object):
                guard let next = object[String(part)] else {
                    throw .parsing("keyPath '\(keyPath)': no key '\(part)' at \(location)")
                }
                current = next
            case .array(let array):
                guard let index = Int(part), array.indices.contains(index) else {
                    throw .parsing("keyPath '\(keyPath)': no index '\(part)' in the array at \(location) (count \(array.count))")
                }
                current = array[index]
            default:
                throw .parsing("keyPath '\(keyPath)': no key '\(part)' at \(location), which is \(current.typeName)")
            }
            walked.append(part)
        }
        return current
    }
}
