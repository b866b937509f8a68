import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// How an OpenAPI parameter's value is written into the request (OpenAPI 3.0/3.1
/// "Style Values"): the RFC 6570 styles `matrix`, `label`, `form`, `simple`, and the
/// query-only `spaceDelimited`, `pipeDelimited` and `deepObject`.
package enum ParameterStyle: String, Sendable, CaseIterable {
    case matrix, label, form, simple, spaceDelimited, pipeDelimited, deepObject
}
