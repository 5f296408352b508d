#pragma once
// Fields of parsed health data by name, as text, for the data-driven health tests: one table row
// names a fixture, an item and a field, and the value the parser must have read.
#include <QString>

#include "core/health/HealthReport.h"
#include "support/TestSupport.h"

namespace faultline::test {

inline QString fixturePath(const QString& name)
{
    return sourcePath(QStringLiteral("tests/fixtures/health/") + name);
}

inline QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

template <class T>
QString optText(const std::optional<T>& v)
{
    if (!v) return QStringLiteral("n/a");
    if constexpr (std::is_same_v<T, bool>)
        return *v ? QStringLiteral("yes") : QStringLiteral("no");
    else
        return QString::number(*v, 'g', 12);
}

// "decoded.<name>" reads a decoded payload field.
inline QString eventField(const XidEvent& e, const QString& f)
{
    if (f == "kind") return e.kind == XidEvent::Kind::Xid ? "xid" : "sxid";
    if (f == "code") return QString::number(e.code);
    if (f == "time") return qs(e.time);
    if (f == "uptime") return optText(e.uptimeSeconds);
    if (f == "boot") return QString::number(e.boot);
    if (f == "boot_id") return qs(e.bootId);
    if (f == "bus") return qs(e.busId);
    if (f == "gpu_instance") return qs(e.gpuInstance);
    if (f == "compute_instance") return qs(e.computeInstance);
    if (f == "device") return qs(e.device);
    if (f == "uuid") return qs(e.uuid);
    if (f == "serial") return qs(e.serial);
    if (f == "pid") return e.pid ? QString::number(*e.pid) : QStringLiteral("none");
    if (f == "process") return qs(e.process);
    if (f == "message") return qs(e.message);
    if (f == "known") return e.known ? "yes" : "no";
    if (f == "name") return qs(e.name);
    if (f == "immediate") return qs(e.immediateAction);
    if (f == "investigatory") return qs(e.investigatoryAction);
    if (f == "source") return qs(e.source);
    if (f.startsWith("decoded.")) {
        const std::string name = f.mid(8).toStdString();
        for (const XidDecodedField& d : e.decoded)
            if (d.name == name) return qs(d.value);
        return QStringLiteral("(absent)");
    }
    return QStringLiteral("(no such field %1)").arg(f);
}

inline QString mapValue(const std::map<std::string, uint64_t>& m, const QString& key)
{
    auto it = m.find(key.toStdString());
    return it == m.end() ? QStringLiteral("(absent)") : QString::number(it->second);
}

inline QString snapshotField(const GpuHealthSnapshot& s, const QString& f)
{
    const GpuIdentity& id = s.identity;
    const GpuCounters& c = s.counters;
    if (f == "bus") return qs(id.busId);
    if (f == "uuid") return qs(id.uuid);
    if (f == "serial") return qs(id.serial);
    if (f == "product") return qs(id.product);
    if (f == "architecture") return qs(id.architecture);
    if (f == "board_part") return qs(id.boardPartNumber);
    if (f == "gpu_part") return qs(id.gpuPartNumber);
    if (f == "vbios") return qs(id.vbiosVersion);
    if (f == "inforom") return qs(id.inforomImageVersion);
    if (f == "inforom_ecc") return qs(id.inforomEccObject);
    if (f == "driver") return qs(id.driverVersion);
    if (f == "cuda") return qs(id.cudaVersion);
    if (f == "timestamp") return qs(s.timestamp);
    if (f == "recovery_action") return qs(s.recoveryAction);
    if (f == "ecc_enabled") return optText(c.eccEnabled);
    if (f == "corrected_volatile") return optText(c.eccCorrectedVolatile);
    if (f == "uncorrected_volatile") return optText(c.eccUncorrectedVolatile);
    if (f == "corrected_aggregate") return optText(c.eccCorrectedAggregate);
    if (f == "uncorrected_aggregate") return optText(c.eccUncorrectedAggregate);
    if (f.startsWith("volatile.")) return mapValue(c.eccVolatile, f.mid(9));
    if (f.startsWith("aggregate.")) return mapValue(c.eccAggregate, f.mid(10));
    if (f.startsWith("sram_source.")) return mapValue(c.sramUncorrectableSources, f.mid(12));
    if (f.startsWith("histogram.")) return mapValue(c.rowRemapperHistogram, f.mid(10));
    if (f == "sram_threshold_exceeded") return optText(c.sramThresholdExceeded);
    if (f == "retired_sbe") return optText(c.retiredPagesSingleBit);
    if (f == "retired_dbe") return optText(c.retiredPagesDoubleBit);
    if (f == "retired_pending") return optText(c.retiredPagesPending);
    if (f == "remapped_available") return c.remappedRowsAvailable ? "yes" : "no";
    if (f == "remapped_corr") return optText(c.remappedRowsCorrectable);
    if (f == "remapped_unc") return optText(c.remappedRowsUncorrectable);
    if (f == "remap_pending") return optText(c.remapPending);
    if (f == "remap_failure") return optText(c.remapFailure);
    if (f == "gpu_temp") return optText(c.gpuTemperatureC);
    if (f == "memory_temp") return optText(c.memoryTemperatureC);
    if (f == "power_draw") return optText(c.powerDrawW);
    if (f == "power_limit") return optText(c.powerLimitW);
    if (f.startsWith("clock.")) {
        auto it = c.clocksMHz.find(f.mid(6).toStdString());
        return it == c.clocksMHz.end() ? QStringLiteral("(absent)") : QString::number(it->second, 'g', 12);
    }
    return QStringLiteral("(no such field %1)").arg(f);
}

}  // namespace faultline::test
