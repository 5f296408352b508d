// Opening an incident without Qt (core/incident): a trace is bisected for its suspect device, a
// pair of snapshots compared; cancellation is an Error with code Cancelled (decided by code, not
// message text), and bad sets of files are errors naming the problem.
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>

#include "cli/ReplayTrace.h"
#include "core/incident/OpenIncident.h"
#include "core/io/SafetensorsWriter.h"

using namespace faultline;

class TestOpenIncident : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_trace, m_suspect, m_reference;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("trace.h5").toStdString();
        QVERIFY(test::makeReplayTrace(QString::fromStdString(m_trace), 1).isEmpty());
        const HostTensor w = test::randomNormalTensor({32, 32}, 5);
        HostTensor bad = w;
        bad.data[43] ^= std::byte{0x10};  // element 10: one flipped exponent bit (bit 28)
        m_suspect = m_dir.filePath("suspect.safetensors").toStdString();
        m_reference = m_dir.filePath("reference.safetensors").toStdString();
        QVERIFY(writeSafetensors(m_suspect, {{"w", bad.dtype, bad.shape, bad.data.data()}}).ok());
        QVERIFY(writeSafetensors(m_reference, {{"w", w.dtype, w.shape, w.data.data()}}).ok());
    }

    void traceAndPair()
    {
        std::vector<double> fractions;
        auto opened = openIncident(
            {m_trace, m_suspect, m_reference}, [&](double f, const std::string&) { fractions.push_back(f); },
            nullptr);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.message().c_str());
        QCOMPARE(opened->suspectLabel, std::string("gpu1"));  // role "suspect"
        QVERIFY(opened->bisect);
        QCOMPARE(opened->bisect->firstDivergentOp, std::optional<size_t>(1));
        QVERIFY(opened->compare);
        QCOMPARE(opened->compare->tensors.size(), size_t(1));
        QCOMPARE(opened->compare->tensors[0].mismatches, uint64_t(1));
        QVERIFY(!fractions.empty());
        QCOMPARE(fractions.back(), 1.0);
        for (size_t i = 1; i < fractions.size(); ++i) QVERIFY(fractions[i] >= fractions[i - 1] - 1e-12);
    }

    void cancelledIsACode()
    {
        std::atomic<bool> cancel{true};
        auto opened = openIncident({m_trace}, {}, &cancel);
        QVERIFY(!opened.ok());
        QCOMPARE(opened.code(), ErrorCode::Cancelled);
        QVERIFY(opened.error().cancelled());
        auto pair = openIncident({m_suspect, m_reference}, {}, &cancel);
        QVERIFY(!pair.ok());
        QCOMPARE(pair.code(), ErrorCode::Cancelled);
    }

    void badSetsOfFiles()
    {
        auto twoTraces = openIncident({m_trace, m_trace}, {}, nullptr);
        QVERIFY(!twoTraces.ok());
        QVERIFY2(twoTraces.message().find("a second trace") != std::string::npos,
                 twoTraces.message().c_str());
        QVERIFY2(twoTraces.message().find(m_trace) == 0, twoTraces.message().c_str());
        auto nothing = openIncident({}, {}, nullptr);
        QVERIFY(!nothing.ok());
        QCOMPARE(nothing.code(), ErrorCode::Usage);
        const std::string missing = m_dir.filePath("missing.h5").toStdString();
        auto none = openIncident({missing}, {}, nullptr);
        QVERIFY(!none.ok());
        QCOMPARE(none.code(), ErrorCode::Io);
        QVERIFY2(none.message().find(missing) == 0, none.message().c_str());
    }

    void loneSnapshotIsListed()
    {
        auto opened = openIncident({m_suspect}, {}, nullptr);
        QVERIFY(opened.ok());
        QVERIFY(opened->singleFile);
        QVERIFY(!opened->compare);
        QVERIFY(!opened->bisect);
    }
};

QTEST_GUILESS_MAIN(TestOpenIncident)
#include "test_open_incident.moc"
