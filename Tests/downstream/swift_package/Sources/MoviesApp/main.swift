// A package that depends on Netlayer through the README's manifest block: the core
// and, with the trait "Combine", NetlayerCombine's publishers (an empty module without it).
import Netlayer
import NetlayerCombine

let publisher: Any.Type = DataTransferPublisher<JSON, Endpoint<JSON>>.self
print("netlayer \(Netlayer.version), \(publisher)")
