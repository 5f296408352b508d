// Glue of the golden collectives that all_reduce's (ElementwiseOps.cpp) does not cover:
// all_gather, broadcast, reduce_scatter (CollectiveGolden.h).
#include <cmath>
#include <limits>

#include "AllReduceGolden.h"
#include "CollectiveGolden.h"
#include "OpDefinitions.h"

namespace faultline::golden::ops {

namespace {

// One input per rank, each of inputs[0]'s shape (at least one dimension) and dtype; `ranks`,
// when given, names as many ranks as there are inputs.
Status checkRankInputs(std::string_view op, GoldenInputs in, const OpParams& p)
{
    if (Status s = checkCount(op, in, 1, size_t(1) << 20, "at least 1 input (one per rank)"); !s) return s;
    if (Status s = checkInputs(op, in); !s) return s;
    if (in[0].shape.empty())
        return opError(op, "inputs[0] is a scalar but ranks are split and joined along dim 0");
    for (size_t i = 1; i < in.size(); ++i)
        if (in[i].shape != in[0].shape || in[i].dtype != in[0].dtype)
            return opError(op, inputName(i) + " is " + std::string(dtypeName(in[i].dtype)) + " " +
                                   shapeString(in[i].shape) + " but every rank needs inputs[0]'s " +
                                   std::string(dtypeName(in[0].dtype)) + " " + shapeString(in[0].shape));
    if (auto it = p.find("ranks"); it != p.end()) {
        const auto* labels = std::get_if<std::vector<std::string>>(&it->second);
        const size_t count = labels ? labels->size() : 1;
        if (count != in.size())
            return opError(op, "parameter ranks=" + attrValueToString(it->second) + " names " +
                                   std::to_string(count) + " rank(s) but there are " +
                                   std::to_string(in.size()) + " inputs");
    }
    return Status::success();
}

Result<size_t> broadcastRoot(GoldenInputs in, const OpParams& p)
{
    const auto it = p.find("root");
    if (it == p.end()) return size_t(0);
    const auto* root = std::get_if<int64_t>(&it->second);
    if (!root)
        return opError("broadcast",
                       "parameter root=" + attrValueToString(it->second) + " is not a rank index");
    if (*root < 0 || uint64_t(*root) >= in.size())
        return opError("broadcast", "parameter root=" + std::to_string(*root) + " is not a rank of the " +
                                        std::to_string(in.size()) + " inputs");
    return size_t(*root);
}

// Bytes move without arithmetic: the bound is 0 (bit for bit), +inf where the golden value is
// not finite (checkWithinBound then requires the same class).
std::vector<double> exactBound(const HostTensor& golden)
{
    std::vector<double> bound = toDoubleVector(golden);
    for (double& b : bound) b = std::isfinite(b) ? 0.0 : std::numeric_limits<double>::infinity();
    return bound;
}

Status checkReduceScatter(GoldenInputs in, const OpParams& p)
{
    if (Status s = checkRankInputs("reduce_scatter", in, p); !s) return s;
    if (in[0].shape[0] % in.size() != 0)
        return opError("reduce_scatter", "dim 0 of " + shapeString(in[0].shape) + " does not split into " +
                                             std::to_string(in.size()) + " equal blocks (one per rank)");
    Result<std::string> name = paramString("reduce_scatter", p, "reduce_op", std::string("sum"));
    if (!name) return name.error();
    if (!parseReduceOp(*name))
        return opError("reduce_scatter", "parameter reduce_op=" + *name + " is not sum, max or min");
    return Status::success();
}

}  // namespace

// ---- all_gather ------------------------------------------------------------------------------

Result<OutputSpec> inferAllGather(GoldenInputs in, const OpParams& p)
{
    if (Status s = checkRankInputs("all_gather", in, p); !s) return s.error();
    OutputSpec out{in[0].dtype, in[0].shape};
    out.shape[0] *= in.size();
    if (Status s = checkOutputSize("all_gather", out.shape); !s) return s.error();
    return out;
}

Result<HostTensor> runAllGather(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    if (auto spec = inferAllGather(in, p); !spec) return spec.error();
    return concatenateRows(in);
}

Result<std::vector<double>> boundAllGather(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions&)
{
    auto spec = inferAllGather(in, p);
    if (!spec) return spec.error();
    if (Status s = checkGolden("all_gather", *spec, golden); !s) return s.error();
    return exactBound(golden);
}

// ---- broadcast -------------------------------------------------------------------------------

Result<OutputSpec> inferBroadcast(GoldenInputs in, const OpParams& p)
{
    if (Status s = checkRankInputs("broadcast", in, p); !s) return s.error();
    if (auto root = broadcastRoot(in, p); !root) return root.error();
    return OutputSpec{in[0].dtype, in[0].shape};
}

Result<HostTensor> runBroadcast(GoldenInputs in, const OpParams& p, const GoldenRunOptions&)
{
    if (auto spec = inferBroadcast(in, p); !spec) return spec.error();
    return in[*broadcastRoot(in, p)];
}

Result<std::vector<double>> boundBroadcast(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                           const BoundOptions&)
{
    auto spec = inferBroadcast(in, p);
    if (!spec) return spec.error();
    if (Status s = checkGolden("broadcast", *spec, golden); !s) return s.error();
    return exactBound(golden);
}

// ---- reduce_scatter: all_reduce's reduction; rank r records block r (recordedRowsOf) --------

Result<OutputSpec> inferReduceScatter(GoldenInputs in, const OpParams& p)
{
    if (Status s = checkReduceScatter(in, p); !s) return s.error();
    return inferAllReduce(in, p);
}

Result<HostTensor> runReduceScatter(GoldenInputs in, const OpParams& p, const GoldenRunOptions& o)
{
    if (Status s = checkReduceScatter(in, p); !s) return s.error();
    return runAllReduce(in, p, o);
}

Result<std::vector<double>> boundReduceScatter(GoldenInputs in, const OpParams& p, const HostTensor& golden,
                                               const BoundOptions& o)
{
    if (Status s = checkReduceScatter(in, p); !s) return s.error();
    return boundAllReduce(in, p, golden, o);
}

}  // namespace faultline::golden::ops
