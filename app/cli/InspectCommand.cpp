// faultline inspect FILE... [--json]: every tensor with name, dtype, shape, bytes, kind; for
// traces the devices and ops too.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "Cli.h"
#include "Commands.h"
#include "core/TensorFile.h"
#include "core/report/InspectReport.h"
#include "core/trace/Trace.h"

namespace faultline::cli {
namespace {

struct InspectOptions {
    std::vector<std::string> files;
    bool json = false;
    bool allowExternal = false;
};

int runInspect(const InspectOptions& o)
{
    OpenOptions open;
    open.allowExternal = o.allowExternal;
    nlohmann::json docs = nlohmann::json::array();
    int rc = kExitOk;
    for (const std::string& path : o.files) {
        auto file = openTensorFile(path, open);
        if (!file) {
            std::cerr << "error: " << file.message() << "\n";
            if (o.json) docs.push_back({{"file", path}, {"error", file.message()}});
            rc = kExitError;
            continue;
        }
        std::unique_ptr<Trace> trace;
        if ((*file)->format() == FileFormat::Trace) {
            auto t = readTrace(path, open);
            if (!t) {
                std::cerr << "error: " << t.message() << "\n";
                if (o.json) docs.push_back({{"file", path}, {"error", t.message()}});
                rc = kExitError;
                continue;
            }
            trace = std::make_unique<Trace>(std::move(t).value());
        }
        if (o.json)
            docs.push_back(inspectJson(**file, trace.get()));
        else
            std::cout << inspectText(**file, trace.get()) << std::flush;
    }
    if (o.json)  // names and strings from the file may be any bytes: replaced, never thrown on
        std::cout << (docs.size() == 1 ? docs[0] : docs)
                         .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    return rc;
}

}  // namespace

CommandRunner addInspectCommand(CLI::App& app)
{
    auto o = std::make_shared<InspectOptions>();
    CLI::App* cmd =
        app.add_subcommand("inspect", "List every tensor in HDF5 snapshots, traces and safetensors files");
    cmd->add_option("FILE", o->files, "HDF5 (.h5) or safetensors files")->required();
    cmd->add_flag("--json", o->json, "One JSON document (an array when several files are given)");
    cmd->add_flag("--allow-external", o->allowExternal,
                  "Follow external links, external storage and virtual datasets (off: refused)");
    return [o] { return runInspect(*o); };
}

}  // namespace faultline::cli
