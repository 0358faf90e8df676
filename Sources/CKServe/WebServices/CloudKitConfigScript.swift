import CKCore
import CKJSON
import CKModel

/// `GET /ck/cloudkit-config.js`: a script that points Apple's CloudKit JS at this server, so a
/// page needs one `<script>` line to run against ck serve instead of Apple's servers:
///
///     <script src="https://cdn.apple-cloudkit.com/ck/2/cloudkit.js"></script>
///     <script src="http://127.0.0.1:8484/ck/cloudkit-config.js"></script>
///
/// CloudKit JS has no base-URL option: its host is a constant. The script wraps
/// `CloudKit.configure` (whether it runs before or after cloudkit.js loads) so that every
/// configuration it is given sends its requests here: `services.fetch` rewrites Apple's origins
/// to this server (the page's own `services.fetch`, if any, still makes the request), and each
/// container's database partitions name it. CloudKit JS's telemetry (`feedbackws`) is answered
/// in the page, so nothing leaves the machine. It holds no secret: only this server's URL.
public enum CloudKitConfigScript {
    public static let path = "/ck/cloudkit-config.js"

    /// The lines a page needs to run against this server (`ck serve --snippet`): Apple's
    /// cloudkit.js, this script, and a configuration with the container's API token.
    public static func snippet(serverURL: String, container: String, environment: Environment, apiToken: String) -> String {
        let q = { (s: String) in JSONWriter.compact(.string(s)) }
        return """
        <script src="https://cdn.apple-cloudkit.com/ck/2/cloudkit.js"></script>
        <script src="\(serverURL)\(path)"></script>
        <script>
          CloudKit.configure({ containers: [{
            containerIdentifier: \(q(container)), environment: \(q(environment.rawValue)),
            apiTokenAuth: { apiToken: \(q(apiToken)), persist: true }
          }] });
        </script>

        """
    }

    static func source(serverURL: String) -> String {
        // The URL is ck serve's own (http://host:port): JSON-quoted, it is a JavaScript string.
        let server = JSONWriter.compact(.string(serverURL))
        return """
        // ck serve: points Apple's CloudKit JS at \(serverURL) instead of Apple's servers.
        // Load it beside cloudkit.js (before or after): every CloudKit.configure({...}) then
        // sends its requests to this server. Nothing in it is secret.
        (function (root) {
          "use strict";
          var server = \(server);
          var apple = /^https:\\/\\/([a-z0-9-]+\\.)*apple-cloudkit\\.com(?=[\\/?#]|$)/i;
          var telemetry = /^https:\\/\\/feedbackws\\.apple-cloudkit\\.com(?=[\\/?#]|$)/i;
          function configured(config) {
            config = Object.assign({}, config);
            var services = Object.assign({}, config.services);
            var pageFetch = services.fetch;
            services.fetch = function (url, options, builtin) {
              url = String(url);
              if (telemetry.test(url)) {
                return Promise.resolve(new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } }));
              }
              var send = pageFetch || builtin || root.fetch.bind(root);
              return send(url.replace(apple, server), options, builtin);
            };
            config.services = services;
            config.containers = (config.containers || []).map(function (c) {
              return Object.assign({}, c, {
                publicDatabasePartition: server,
                privateDatabasePartition: server,
                sharedDatabasePartition: server
              });
            });
            return config;
          }
          function wrap(CloudKit) {
            if (!CloudKit || typeof CloudKit.configure !== "function" || CloudKit.ckServe) return CloudKit;
            var configure = CloudKit.configure;
            CloudKit.configure = function (config) { return configure.call(this, configured(config)); };
            CloudKit.ckServe = server;
            return CloudKit;
          }
          if (root.CloudKit) {
            wrap(root.CloudKit);
          } else {
            // cloudkit.js not loaded yet: wrap it as it arrives (it assigns window.CloudKit).
            var loaded;
            Object.defineProperty(root, "CloudKit", {
              configurable: true,
              enumerable: true,
              get: function () { return loaded; },
              set: function (value) { loaded = wrap(value); }
            });
          }
        })(typeof window !== "undefined" ? window : globalThis);

        """
    }
}
