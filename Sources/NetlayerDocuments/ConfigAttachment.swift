import NetlayerCore
import NetlayerJSON

/// What a client made from a config document keeps with it: its named endpoints and
/// its OpenAPI document, which `call` reads.
package struct ConfigAttachment: Sendable {
    package var endpoints: JSONObject
    package var openAPI: OpenAPIConfig?

    package init(endpoints: JSONObject, openAPI: OpenAPIConfig?) {
        self.endpoints = endpoints
        self.openAPI = openAPI
    }
}

extension NetlayerClient {
    /// The config's named endpoints, as documents.
    package var namedEndpoints: JSONObject { (attachment as? ConfigAttachment)?.endpoints ?? JSONObject() }

    /// The config's OpenAPI document and its settings.
    package var openAPI: OpenAPIConfig? { (attachment as? ConfigAttachment)?.openAPI }
}
