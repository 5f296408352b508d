#include "NodeIdentity.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../devices/DeviceReport.h"

namespace faultline {

EnvLookup processEnvironment()
{
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (!v) return std::nullopt;
        return std::string(v);
    };
}

nlohmann::json nodeIdentity(const EnvLookup& env)
{
    auto get = [&](const char* name) {
        auto v = env(name);
        return v && !v->empty() ? v : std::nullopt;
    };
    nlohmann::json node = nlohmann::json::object();
    std::string host;
    if (auto h = get("FAULTLINE_HOST"))
        host = *h;
    else if (auto s = get("SLURMD_NODENAME"))
        host = *s;
    else {
        char name[256] = {};
        if (gethostname(name, sizeof name - 1) == 0) host = name;
    }
    node["host"] = host;
    if (auto task = get("SLURM_ARRAY_TASK_ID")) {
        node["scheduler"] = "slurm";
        node["task"] = *task;
        if (auto job = get("SLURM_ARRAY_JOB_ID")) node["job_id"] = *job;
    } else if (auto index = get("JOB_COMPLETION_INDEX")) {
        node["scheduler"] = "kubernetes";
        node["task"] = *index;
        if (auto pod = get("HOSTNAME")) node["pod"] = *pod;
    } else if (auto job = get("SLURM_JOB_ID")) {
        node["scheduler"] = "slurm";
        node["job_id"] = *job;
    } else {
        node["scheduler"] = "none";
    }
    return node;
}

}  // namespace faultline
