// faultline verify DIR|TAR [--pubkey KEY.pub]: checks an evidence bundle against its manifest and
// signature. Exit 0 intact, 1 something changed, added or removed (each named), 2 error.
#include <iostream>
#include <memory>

#include "Cli.h"
#include "Commands.h"
#include "core/evidence/BundleVerifier.h"

namespace faultline::cli {
namespace {

struct VerifyOptions {
    std::string bundle, pubkey;
};

}  // namespace

CommandRunner addVerifyCommand(CLI::App& app)
{
    auto o = std::make_shared<VerifyOptions>();
    CLI::App* cmd = app.add_subcommand("verify",
                                       "Check an evidence bundle (directory or .tar): every file against "
                                       "MANIFEST.sha256 and the manifest's minisign signature");
    cmd->add_option("BUNDLE", o->bundle, "bundle directory or its .tar")->required();
    cmd->add_option(
        "--pubkey", o->pubkey,
        "minisign public key the bundle must be signed with (default: the bundle's own signing-key.pub)");
    return [o] {
        auto check = verifyBundle(o->bundle, o->pubkey);
        if (!check) {
            std::cerr << "error: " << check.message() << "\n";
            return kExitError;
        }
        std::cout << bundleCheckText(*check);
        return check->intact() ? kExitOk : kExitDiverged;
    };
}

}  // namespace faultline::cli
