import NetlayerJSON

extension HTTPResponse {
    /// What a finished request comes to once decoded, the one place for it: a status
    /// error goes through the error resolver, an empty body follows the 204/205/HEAD rule,
    /// a downloaded or streamed body has no value but its description, then the decoder
    /// runs. Failures are logged to the decoding logger.
    public enum ResponseDecoding {
        public static func decode<T: Decodable>(_ outcome: NetworkOutcome, method: HTTPMethod, decoder: any ResponseDecoder,
                                                resolver: any DataTransferErrorResolver,
                                                logger: any DataTransferErrorLogger) -> Result<DataResponse<T>, DataTransferError> {
            switch outcome.result {
            case .failure(let error):
                return .failure(logged(resolve(error, with: resolver), logger))
            case .success(let response):
                do {
                    let value: T = try self.value(of: response, method: method,
                                                  decoder: AutoResponseDecoder.resolve(decoder, for: response))
                    return .success(DataResponse(value: value, response: response, attempts: outcome.attempts))
                } catch {
                    return .failure(logged(error, logger))
                }
            }
        }

        /// A transport error as the resolver turns it: kind `resolved` when it replaced it.
        public static func resolve(_ error: NetworkError, with resolver: any DataTransferErrorResolver) -> DataTransferError {
            let resolved = resolver.resolve(error: error)
            if let network = resolved as? NetworkError { return .networkFailure(network) }
            return .resolvedNetworkFailure(resolved)
        }

        /// The value of a response's body as `decoder` reads it (the empty-body and
        /// download rules first); `decoder` is used as given (see `AutoResponseDecoder.resolve`).
        public static func value<T: Decodable>(of response: HTTPResponse, method: HTTPMethod,
                                               decoder: any ResponseDecoder) throws(DataTransferError) -> T {
            if let file = response.downloadedFile {
                // The body is on disk: the value says where.
                if T.self == JSON.self {
                    return JSON.object(["path": .string(file), "bytes": .int(response.bodyBytes)]) as! T
                }
                if let path = file as? T { return path }
                return try decoder.decodeEmpty()
            }
            if response.streamEvents != nil { return try EmptyResponseDecoder().decodeEmpty() }
            if response.body.isEmpty && decoder.requiresBody {
                if response.statusCode == 204 || response.statusCode == 205 || method == .head {
                    return try decoder.decodeEmpty()
                }
                throw .noResponse
            }
            return try decoder.decode(response.body)
        }

        package static func logged(_ error: DataTransferError, _ logger: any DataTransferErrorLogger) -> DataTransferError {
            logger.log(error: error)
            return error
        }
    }
}

/// `HTTPResponse.ResponseDecoding` by the name it is known by.
public typealias ResponseDecoding = HTTPResponse.ResponseDecoding
