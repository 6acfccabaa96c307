import HTTPTypes

/// The fields of a request's head that the access rules read (`AccessMiddleware.provenance`,
/// `Credentials`): Swift HTTP Types' `HTTPFields` on the router, and NIO's `HTTPHeaders` for
/// a snapshot poll answered on the event loop (`ReadySnapshots`), whose head is not converted
/// to Swift HTTP Types unless the router must answer it (issue 16: the conversion was 4,300 of
/// a poll's 115,000 instructions). Each reads as `HTTPFields` reads.
public protocol RequestFields {
    /// The field's values joined as `HTTPFields` joins them (`; ` for `Cookie`, else `, `); nil without one.
    subscript(_ name: HTTPField.Name) -> String? { get }
    /// Each of the field's values, as the request sent them.
    subscript(values name: HTTPField.Name) -> [String] { get }
}

extension HTTPFields: RequestFields {}
