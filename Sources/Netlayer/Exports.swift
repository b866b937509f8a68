// What `import Netlayer` brings: every layer of the library.
@_exported import NetlayerCore
@_exported import NetlayerCurl
@_exported import NetlayerDocuments
@_exported import NetlayerFeatures
@_exported import NetlayerJSON
