// Anomaly regions (core/compare/AnomalyRegions.h) on planted pairs: each corrupted block is one
// region covering it, worst first by max |error|, rounding-sized noise forms none, touching
// tiles join; and ulpDistance (core/compare/UlpDistance.h) agrees with the comparison's own ulp
// of every listed worst element, for float32, bfloat16 and int32.
#include <QtTest>
#include <cstring>
#include <random>

#include "core/Convert.h"
#include "core/compare/AnomalyRegions.h"
#include "core/compare/TensorComparer.h"
#include "core/compare/UlpDistance.h"

using namespace faultline;

namespace {

Divergence compareFloats(const std::vector<float>& s, const std::vector<float>& r, uint64_t rows,
                         uint64_t cols)
{
    TensorComparer comparer;
    auto d = comparer.compare(DType::Float32, {rows, cols}, s.data(), r.data(), "t");
    if (!d) qFatal("%s", d.message().c_str());
    return std::move(d).value();
}

void corrupt(std::vector<float>& s, uint64_t cols, uint64_t r0, uint64_t c0, uint64_t side, float delta)
{
    for (uint64_t r = r0; r < r0 + side; ++r)
        for (uint64_t c = c0; c < c0 + side; ++c) s[size_t(r * cols + c)] += delta;
}

}  // namespace

class TestAnomalyRegions : public QObject {
    Q_OBJECT
private slots:
    void blocksAreRegionsWorstFirst()
    {
        const uint64_t rows = 1024, cols = 1024;
        std::vector<float> ref(size_t(rows * cols));
        for (size_t i = 0; i < ref.size(); ++i) ref[i] = 1.0f + float(i % 251) / 256.0f;
        std::vector<float> sus = ref;
        corrupt(sus, cols, 100, 700, 40, 2.0f);  // smaller error, larger block
        corrupt(sus, cols, 600, 50, 20, 50.0f);  // the worst
        corrupt(sus, cols, 900, 900, 8, 0.5f);   // the mildest
        std::mt19937 rng(7);
        for (int k = 0; k < 300; ++k) {  // 1-ulp noise away from the blocks
            const size_t i = size_t(rng() % (rows * cols));
            if (i / cols < 80) sus[i] = std::nextafter(sus[i], 9.0f);
        }
        const Divergence d = compareFloats(sus, ref, rows, cols);
        const AnomalyRegions regions = findAnomalyRegions(d);
        QCOMPARE(regions.counted, std::string("anomalies"));
        QCOMPARE(regions.found, uint64_t(3));
        const uint64_t expect[3][3] = {{600, 50, 20}, {100, 700, 40}, {900, 900, 8}};
        const uint64_t tile = d.tiles.levels().front().tileRows;
        for (int k = 0; k < 3; ++k) {
            const Region& b = regions.regions[size_t(k)].box;
            const uint64_t r0 = expect[k][0], c0 = expect[k][1], side = expect[k][2];
            QVERIFY(b.rowBegin <= r0 && b.rowEnd >= r0 + side && b.colBegin <= c0 && b.colEnd >= c0 + side);
            QVERIFY(b.rowEnd - b.rowBegin < side + 2 * tile && b.colEnd - b.colBegin < side + 2 * tile);
            QCOMPARE(regions.regions[size_t(k)].count, side * side);
        }
        QVERIFY(regions.regions[0].maxAbsError > regions.regions[1].maxAbsError);
        QVERIFY(regions.regions[1].maxAbsError > regions.regions[2].maxAbsError);
        // The limit keeps the worst.
        const AnomalyRegions one = findAnomalyRegions(d, 1);
        QCOMPARE(one.found, uint64_t(3));
        QCOMPARE(one.regions.size(), size_t(1));
        QCOMPARE(one.regions[0].box, regions.regions[0].box);
    }

    void noiseAloneCountsMismatches()
    {
        const uint64_t rows = 64, cols = 64;
        std::vector<float> ref(size_t(rows * cols), 1.5f), sus = ref;
        sus[10] = std::nextafter(1.5f, 2.0f);  // one rounding-sized mismatch: no anomaly, exact: beyond
        const Divergence d = compareFloats(sus, ref, rows, cols);
        QCOMPARE(d.anomalies, uint64_t(0));
        const AnomalyRegions regions = findAnomalyRegions(d);
        QCOMPARE(regions.found, uint64_t(1));
        QVERIFY(regions.counted == "beyond tolerance" || regions.counted == "mismatches");
        QVERIFY(regions.regions[0].box.rowBegin == 0 && regions.regions[0].box.colBegin == 0);
        // Identical tensors: nothing.
        QCOMPARE(findAnomalyRegions(compareFloats(ref, ref, rows, cols)).found, uint64_t(0));
    }

    void ulpDistanceIsTheComparisons_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::newRow("float32") << int(DType::Float32);
        QTest::newRow("bfloat16") << int(DType::BFloat16);
        QTest::newRow("int32") << int(DType::Int32);
    }
    void ulpDistanceIsTheComparisons()
    {
        QFETCH(int, dtype);
        const DType t = DType(dtype);
        const size_t n = 4096, size = dtypeSize(t);
        std::vector<std::byte> s(n * size), r(n * size);
        std::mt19937_64 rng(11);
        for (size_t i = 0; i < n; ++i) {
            uint64_t a = rng(), b = a;
            if (i % 3 == 0) b ^= uint64_t(1) << (rng() % (8 * size - 1));  // sign-crossing flips too
            if (t == DType::BFloat16) {  // finite values only: clear the exponent's top bit
                a &= ~uint64_t(0x4000);
                b &= ~uint64_t(0x4000);
            } else if (t == DType::Float32) {
                a &= ~uint64_t(0x40000000);
                b &= ~uint64_t(0x40000000);
            }
            std::memcpy(s.data() + i * size, &a, size);
            std::memcpy(r.data() + i * size, &b, size);
        }
        TensorComparer comparer;
        auto d = comparer.compare(t, {64, 64}, s.data(), r.data(), "t");
        QVERIFY(d.ok());
        QVERIFY(!d->top.empty());
        for (const ElementDiff& e : d->top) {
            const auto ulp = ulpDistance(t, e.suspectBits, e.referenceBits);
            QVERIFY(ulp.has_value());
            QCOMPARE(*ulp, e.ulp);
        }
        // NaN/Inf: no distance.
        if (t == DType::Float32) QVERIFY(!ulpDistance(t, 0x7fc00000u, 0x3f800000u).has_value());
        if (t == DType::Int32) QCOMPARE(*ulpDistance(t, uint64_t(uint32_t(-3)), 4u), uint64_t(7));
    }
};

QTEST_MAIN(TestAnomalyRegions)
#include "test_anomaly_regions.moc"
