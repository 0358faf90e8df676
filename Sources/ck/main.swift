import CKCLI
import Foundation

exit(CLI.main(CommandLine.arguments))
