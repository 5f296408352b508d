#include "CudaOpSettings.h"

#include "core/golden/GoldenSupport.h"

namespace faultline::cuda {

Result<CudaOpSettings> parseCudaOpSettings(const std::string& op, const std::map<std::string, AttrValue>& params)
{
    CudaOpSettings s;
    Result<std::string> impl = golden::paramString(op, params, "impl", std::string("golden"));
    if (!impl) return impl.error();
    if (*impl == "golden")
        s.impl = CudaImpl::Golden;
    else if (*impl == "cublas")
        s.impl = CudaImpl::Cublas;
    else
        return golden::opError(op, "parameter impl=" + *impl + " is not golden or cublas");
    Result<bool> tf32 = golden::paramBool(op, params, "tf32", false);
    if (!tf32) return tf32.error();
    s.tf32 = *tf32;
    if (s.impl == CudaImpl::Cublas && op != "gemm")
        return golden::opError(op, "impl=cublas replays gemm only (this op has golden kernels only)");
    if (s.tf32 && s.impl != CudaImpl::Cublas)
        return golden::opError(op, "tf32=1 needs impl=cublas (golden kernels never use TF32)");
    return s;
}

}  // namespace faultline::cuda
