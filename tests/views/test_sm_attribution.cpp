// "Colour by SM" blames only the suspect: of the tile->SM maps replays recorded for an op, the
// one chosen is the suspect's own GPU's (the cuda:N target whose GPU in the inventory has the
// suspect's UUID); a simulated target's or another GPU's map is passed over with its reason,
// and no map is chosen without an inventory or a UUID. The categorical palette never gives two
// SMs one colour, past its fixed colours too.
#include <QtTest>
#include <set>

#include "views/heatmap/SmAttribution.h"
#include "views/plots/PlotStyle.h"

using namespace faultline;
using namespace faultline::views;

namespace {

TileSmMap mapOnSm(int32_t sm)
{
    TileSmMap m;
    m.tile = 32;
    m.rows = 64;
    m.cols = 64;
    m.sm.assign(4, sm);
    return m;
}

std::shared_ptr<Incident> incidentWithMaps()
{
    auto incident = std::make_shared<Incident>();
    auto trace = std::make_shared<Trace>();
    TraceDevice suspect, healthy;
    suspect.label = "gpu1";
    suspect.uuid = "GPU-bbbb";
    healthy.label = "gpu0";
    healthy.uuid = "GPU-aaaa";
    trace->devices = {healthy, suspect};
    incident->trace = trace;
    incident->suspectLabel = "gpu1";
    incident->replaySmMaps->byOp[3] = {{"sim:sm:sm=3,sms=5", mapOnSm(3)},
                                       {"cuda:0", mapOnSm(11)},
                                       {"cuda:1", mapOnSm(7)},
                                       {"cpu", mapOnSm(0)}};
    return incident;
}

}  // namespace

class TestSmAttribution : public QObject {
    Q_OBJECT
private slots:
    void choosesTheSuspectsOwnGpu()
    {
        const auto incident = incidentWithMaps();
        const std::map<std::string, std::string> inventory{{"cuda:0", "GPU-aaaa"}, {"cuda:1", "GPU-bbbb"}};
        const SuspectSmMap own = suspectSmMap(*incident, 3, 64, 64, inventory);
        QVERIFY(own.chosen.has_value());
        QCOMPARE(own.chosen->target, QString("cuda:1"));
        QCOMPARE(own.chosen->map.smOf(0, 0), 7);
    }

    void passesOverEveryOtherTarget()
    {
        const auto incident = incidentWithMaps();
        // The suspect's GPU is not on this machine: nothing is chosen, and each is named.
        const std::map<std::string, std::string> inventory{{"cuda:0", "GPU-aaaa"}, {"cuda:1", "GPU-cccc"}};
        const SuspectSmMap none = suspectSmMap(*incident, 3, 64, 64, inventory);
        QVERIFY(!none.chosen.has_value());
        QVERIFY2(none.why.contains("sim:sm:sm=3,sms=5 (not a GPU"), qPrintable(none.why));
        QVERIFY2(none.why.contains("cpu (not a GPU"), qPrintable(none.why));
        QVERIFY2(none.why.contains("cuda:0 (GPU GPU-aaaa, not the suspect's GPU-bbbb)"),
                 qPrintable(none.why));
        QVERIFY2(none.why.contains("cuda:1 (GPU GPU-cccc"), qPrintable(none.why));
        // Without an inventory no cuda:N is known to be the suspect's.
        const SuspectSmMap unknown = suspectSmMap(*incident, 3, 64, 64, {});
        QVERIFY(!unknown.chosen.has_value());
        QVERIFY2(unknown.why.contains("cuda:1 (not in this machine's inventory)"), qPrintable(unknown.why));
        // A map of another shape (another op's output) is never taken.
        QVERIFY(!suspectSmMap(*incident, 3, 64, 128, {{"cuda:1", "GPU-bbbb"}}).chosen.has_value());
        QVERIFY(!suspectSmMap(*incident, 4, 64, 64, {{"cuda:1", "GPU-bbbb"}}).chosen.has_value());
    }

    void paletteNeverRepeats_data()
    {
        QTest::addColumn<int>("n");
        QTest::newRow("1") << 1;
        QTest::newRow("5") << 5;
        QTest::newRow("palette") << int(PlotStyle::kCategoricalPaletteSize);
        QTest::newRow("one more") << int(PlotStyle::kCategoricalPaletteSize) + 1;
        QTest::newRow("132 SMs (H100)") << 132;
        QTest::newRow("1000") << 1000;
    }
    void paletteNeverRepeats()
    {
        QFETCH(int, n);
        const std::vector<QColor> colours = PlotStyle::categoricalColours(size_t(n));
        QCOMPARE(int(colours.size()), n);
        std::set<QRgb> distinct;
        for (const QColor& c : colours) distinct.insert(c.rgb());
        QCOMPARE(int(distinct.size()), n);
        // The gradient draws level i in colour i (to the rounding of one channel step), and the
        // drawn colours are all different too.
        QCPColorGradient g = PlotStyle::categoricalGradient(size_t(n));
        const double hi = std::max(1, n - 1);
        std::set<QRgb> drawn;
        for (int i = 0; i < n; ++i) {
            const QColor c = QColor::fromRgb(g.color(double(i), QCPRange(0, hi)));
            const QColor want = colours[size_t(i)];
            QVERIFY2(
                std::abs(c.red() - want.red()) <= 1 && std::abs(c.green() - want.green()) <= 1 &&
                    std::abs(c.blue() - want.blue()) <= 1,
                qPrintable(QStringLiteral("level %1: %2, palette %3").arg(i).arg(c.name(), want.name())));
            drawn.insert(c.rgb());
        }
        QCOMPARE(int(drawn.size()), n);
    }
};

QTEST_MAIN(TestSmAttribution)
#include "test_sm_attribution.moc"
