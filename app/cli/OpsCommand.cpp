// faultline ops [--json]: the trace v1 op table (core/trace/OpList.h) as this build knows it: each
// op's signature, the parameters it reads, how it computes and whether it is a collective. What
// the capture package's aten mapping is checked against (test_capture_op_table).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "Cli.h"
#include "Commands.h"
#include "core/golden/OpRegistry.h"
#include "core/trace/TraceOps.h"

namespace faultline::cli {

CommandRunner addOpsCommand(CLI::App& app)
{
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("ops", "List the ops traces hold and the golden model judges");
    cmd->add_flag("--json", *json, "print the table as JSON");
    return [json] {
        nlohmann::json ops = nlohmann::json::array();
        for (const TraceOpSpec& op : traceOpTable()) {
            std::vector<std::string> params(op.params.begin(), op.params.end());
            ops.push_back({{"name", op.name},
                           {"signature", op.signature},
                           {"params", params},
                           {"numerics", opNumericsName(op.numerics)},
                           {"collective", op.collective},
                           {"golden", golden::findGoldenOp(op.name) != nullptr}});
        }
        if (*json) {
            std::cout << nlohmann::json{{"ops", ops}}.dump(2) << "\n";
            return kExitOk;
        }
        for (const auto& op : ops) {
            std::cout << op["signature"].get<std::string>();
            if (!op["params"].empty()) {
                std::cout << "  params:";
                for (const auto& p : op["params"]) std::cout << " " << p.get<std::string>();
            }
            std::cout << "  (" << op["numerics"].get<std::string>()
                      << (op["collective"].get<bool>() ? ", collective" : "") << ")\n";
        }
        return kExitOk;
    };
}

}  // namespace faultline::cli
