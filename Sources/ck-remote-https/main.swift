// ck-remote-https: the helper ck starts to speak HTTPS (Docs/remote.md, "HTTPS").
import Foundation

exit(RemoteHTTPSHelper(input: 0, output: 1, environment: ProcessInfo.processInfo.environment).run())
