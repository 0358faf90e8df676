/// The console's files, compiled into the binary from Resources/ (SwiftPM's `embedInCode`):
/// no build step, no file beside ck to lose, and nothing fetched at run time.
public enum ConsolePage {
    static let html = String(decoding: PackageResources.console_html, as: UTF8.self)
    static let script = String(decoding: PackageResources.console_js, as: UTF8.self)
    static let style = String(decoding: PackageResources.console_css, as: UTF8.self)

    /// The page a browser gets when the console refuses it: why, and what to do.
    static func refused(_ reason: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>ck console: refused</title></head>
        <body><h1>The console refused this request</h1><p id="reason">\(HTMLText.escaped(reason))</p>
        <p>Start the console with <code>ck console</code>, or open the <code>"console"</code> URL that <code>ck serve</code> printed.</p></body></html>
        """
    }

    /// A local file's page that sends the browser on to the console's URL: `ck console` opens
    /// this file rather than the URL, so the key is in no program's arguments, where any user
    /// of the machine could read it (`ps`, /proc/PID/cmdline), as Jupyter opens a redirect file.
    public static func launcher(_ url: String) -> String {
        let u = HTMLText.escaped(url)
        return """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
        <meta http-equiv="refresh" content="0;url=\(u)"><title>ck console</title></head>
        <body><p>Opening the ck console… If nothing happens, <a href="\(u)">open it</a>.</p></body></html>

        """
    }
}
