// faultline keygen KEY: a minisign key pair for signing evidence bundles, the secret key KEY
// (unencrypted, mode 0600) and the public key KEY.pub, in minisign's formats.
#include <iostream>
#include <memory>

#include "Cli.h"
#include "Commands.h"
#include "core/evidence/MinisignKey.h"

namespace faultline::cli {

CommandRunner addKeygenCommand(CLI::App& app)
{
    auto key = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("keygen",
                                       "Write a minisign key pair for signing evidence bundles: the secret "
                                       "key KEY (unencrypted) and the public key KEY.pub");
    cmd->add_option("KEY", *key, "secret key file to create (KEY.pub is created beside it)")->required();
    return [key] {
        auto pub = createMinisignKeyPair(*key);
        if (!pub) {
            std::cerr << "error: " << pub.message() << "\n";
            return kExitError;
        }
        std::cout << "secret key: " << *key << " (unencrypted: keep it private)\n"
                  << "public key: " << *key << ".pub (key id " << pub->keyIdText() << ")\n"
                  << "sign a bundle with: faultline evidence --sign " << *key << " ...\n"
                  << "check it with:      faultline verify BUNDLE --pubkey " << *key
                  << ".pub   or   minisign -V -p " << *key << ".pub -m BUNDLE/MANIFEST.sha256\n";
        return kExitOk;
    };
}

}  // namespace faultline::cli
