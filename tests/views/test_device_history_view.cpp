// The device history view (views/fleet/DeviceHistoryView.h) over a real ledger: ten years of one
// GPU written through the ledger API into the default SQLite ledger of a temporary XDG_DATA_HOME
// (the one the CLI uses without --ledger): a health snapshot a day with growing counters and a
// flag now and then, four Xid events a day, SXid events, GPU resets, reboots, a move to another
// host, a campaign a month (two failing ten days apart) and a bundle a year. The view shows what the
// ledger holds (rows, counts per bin at low zoom, raw marks when zoomed in), the campaigns' rates
// with their intervals, the rules' reasons as core's timeline gives them; errors name the GPU and
// the ledger; the devices panel, the fleet table and the evidence dialog open it; and the longest
// GUI-thread stall while it loads, draws and zooms ten years is measured (tests/support/StallProbe.h;
// the figure is in bench/RESULTS.md). With FAULTLINE_DOC_SCREENSHOTS=DIR it saves
// DIR/screenshot-device-history.png.
#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QWheelEvent>
#include <QtTest>
#include <chrono>
#include <limits>
#include <map>

#include "core/fleet/FleetMerge.h"
#include "core/ledger/LedgerTime.h"
#include "core/ledger/LedgerTimeline.h"
#include "core/test_ledger_support.h"
#include "support/StallProbe.h"
#include "views/evidence/EvidenceExportDialog.h"
#include "views/fleet/DeviceHistoryView.h"
#include "views/fleet/FleetView.h"
#include "views/replay/DevicesPanel.h"
#include "views/shell/ViewText.h"

using namespace faultline;
using namespace faultline::views;
using nlohmann::json;

namespace {

const std::string kSerial = "SN10Y", kUuid = "GPU-10Y", kBus = "0000:3b:00.0";
constexpr int kDays = 3652;             // ten years
constexpr int kXidPerDay = 4;           // at 01:00, 07:00, 13:00, 19:00
constexpr int kFirstFailingDay = 3010;  // a failing campaign then and ten days later: an RMA candidate
const auto kStart = std::chrono::sys_days{std::chrono::year{2016} / 12 / 5};

std::string at(int day, int hour = 0)
{
    return isoUtc(
        std::chrono::system_clock::time_point(kStart + std::chrono::days{day} + std::chrono::hours{hour}));
}

double seconds(int day, int hour = 0)
{
    const auto t = kStart + std::chrono::days{day} + std::chrono::hours{hour};
    return double(std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace

class TestDeviceHistoryView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    size_t m_xids = 0, m_sxids = 0, m_resets = 0, m_snapshots = 0, m_flagged = 0, m_boots = 0,
           m_campaigns = 0, m_failing = 0, m_bundles = 0;

    // The history as core's timeline gives it (what the view must show).
    LedgerTimeline coreTimeline()
    {
        auto ledger = Ledger::openExisting("");
        if (!ledger) return {};
        auto t = ledgerTimeline(ledger->engine(), kSerial);
        return t ? *t : LedgerTimeline{};
    }

    static bool waitShown(DeviceHistoryView& view)
    {
        QSignalSpy shown(&view, &DeviceHistoryView::historyShown);
        QSignalSpy failed(&view, &DeviceHistoryView::failed);
        return QTest::qWaitFor([&] { return !shown.isEmpty() || !failed.isEmpty(); }, 120000) &&
               !shown.isEmpty();
    }

    void fill(Ledger& ledger)
    {
        // Health snapshots and events on node1 for the first half, node2 for the second (a move).
        for (int half = 0; half < 2; ++half) {
            const std::string host = half == 0 ? "node1" : "node2";
            const int from = half * kDays / 2, to = (half + 1) * kDays / 2;
            json snapshots = json::array();
            std::vector<KernelLogBoot> boots;
            std::vector<LedgerEventRow> events, resets;
            const json identity = {{"bus_id", kBus},           {"uuid", kUuid},
                                   {"serial", kSerial},        {"product", "NVIDIA H100"},
                                   {"vbios_version", "96.00"}, {"driver_version", "550.127.05"}};
            for (int d = from; d < to; ++d) {
                const bool pending = d % 500 == 250;
                m_flagged += pending;
                snapshots.push_back({{"source", "smi-" + std::to_string(d) + ".xml"},
                                     {"timestamp", at(d, 3)},
                                     {"identity", identity},
                                     {"counters",
                                      {{"ecc_corrected_aggregate", d / 10},
                                       {"ecc_uncorrected_aggregate", d / 1000},
                                       {"remapped_rows",
                                        {{"correctable", d / 365},
                                         {"uncorrectable", 0},
                                         {"pending", pending},
                                         {"failure", false}}}}}});
                for (int k = 0; k < kXidPerDay; ++k) {
                    LedgerEventRow e;
                    e.serial = kSerial;
                    e.uuid = ledgerUuid(kUuid);
                    e.host = host;
                    e.busId = kBus;
                    e.code = k % 2 ? 63 : 48;
                    e.at = at(d, 1 + 6 * k);
                    e.timeText = *e.at;
                    e.name = k % 2 ? "ECC page retirement" : "Double Bit ECC Error";
                    e.message = "planted";
                    e.source = "kern.log:" + std::to_string(d * kXidPerDay + k);
                    events.push_back(e);
                }
                if (d % 30 == 15) {
                    LedgerEventRow e = events.back();
                    e.kind = "sxid";
                    e.code = 12028;
                    e.at = at(d, 2);
                    e.timeText = *e.at;
                    e.source = "kern.log:sxid" + std::to_string(d);
                    events.push_back(e);
                    ++m_sxids;
                }
                if (d % 90 == 45) {
                    LedgerEventRow e = events.back();
                    e.kind = "reset";
                    e.code = 0;
                    e.at = at(d, 4);
                    e.timeText = *e.at;
                    e.action = "reset";
                    e.source = "kern.log:reset" + std::to_string(d);
                    resets.push_back(e);
                    ++m_resets;
                }
                if (d % 30 == 20) {
                    boots.push_back({int(boots.size()), "boot" + std::to_string(d), at(d, 5), std::nullopt,
                                     "kern.log:boot" + std::to_string(d)});
                    ++m_boots;
                }
            }
            m_xids += size_t(to - from) * kXidPerDay;
            m_snapshots += size_t(to - from);
            const json doc = {{"format", "faultline-health"},
                              {"version", 1},
                              {"gpus",
                               {{{"bus_id", kBus},
                                 {"uuid", kUuid},
                                 {"serial", kSerial},
                                 {"identity", identity},
                                 {"recommendation", "none"},
                                 {"snapshots", snapshots},
                                 {"events", json::array()}}}},
                              {"unattributed_events", json::array()}};
            auto added = ledger.addHealth(doc, {host, "health-" + host + ".json"}, boots, resets);
            QVERIFY2(added.ok(), added.ok() ? "" : added.message().c_str());
            auto addedEvents = ledger.addEvents(events);
            QVERIFY2(addedEvents.ok(), addedEvents.ok() ? "" : addedEvents.message().c_str());
        }
        // A campaign a month (day 10 + 30k); the one on kFirstFailingDay failed, and so did one ten days
        // later.
        const auto addCampaign = [&](int d, bool failing) {
            const std::string host = d < kDays / 2 ? "node1" : "node2";
            const std::string file = "campaign-" + std::to_string(d) + ".h5";
            auto added = ledger.addCampaign(
                {test::campaignReport(host, kSerial, kUuid, failing ? "transient" : "healthy",
                                      failing ? 4 : 0, 200, "trace-" + std::to_string(d) + ".h5"),
                 file, at(d, 12)},
                {host, file});
            QVERIFY2(added.ok(), added.ok() ? "" : added.message().c_str());
            ++m_campaigns;
            m_failing += failing;
        };
        for (int d = 10; d < kDays; d += 30) {
            addCampaign(d, d == kFirstFailingDay);
            if (d == kFirstFailingDay) addCampaign(d + 10, true);
        }
        // A bundle a year.
        for (int y = 0; y < 10; ++y) {
            const int d = 365 * y + 100;
            const json caseJson = {{"schema", "faultline-evidence-case"},
                                   {"suspect", {{"serial", kSerial}, {"uuid", kUuid}, {"bus_id", kBus}}},
                                   {"case", {{"id", "FL-" + std::to_string(y)}, {"created", at(d, 9)}}},
                                   {"host", {{"hostname", d < kDays / 2 ? "node1" : "node2"}}}};
            auto added = ledger.addBundle(
                {caseJson, "digest" + std::to_string(y), true, "/cases/" + std::to_string(y)},
                {"node1", "case.json"});
            QVERIFY2(added.ok(), added.ok() ? "" : added.message().c_str());
            ++m_bundles;
        }
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("XDG_DATA_HOME", m_dir.path().toUtf8());
        QElapsedTimer clock;
        clock.start();
        auto ledger = Ledger::open("");  // the default ledger, in the temporary data directory
        QVERIFY2(ledger.ok(), ledger.ok() ? "" : ledger.message().c_str());
        QVERIFY(QFileInfo(qs(ledger->location())).absoluteFilePath().startsWith(m_dir.path()));
        fill(*ledger);
        qInfo(
            "ten years of %s written in %.1f s: %zu Xid, %zu SXid, %zu resets, %zu snapshots, %zu boots, "
            "%zu campaigns, %zu bundles",
            kSerial.c_str(), clock.elapsed() / 1000.0, m_xids, m_sxids, m_resets, m_snapshots, m_boots,
            m_campaigns, m_bundles);
    }

    // HistoryBinning alone: raw marks while few, else the finest bin width that fits, each mark once.
    void binning_data()
    {
        QTest::addColumn<int>("marks");
        QTest::addColumn<double>("span");  // seconds the marks spread over, evenly
        QTest::addColumn<int>("maxBins");
        QTest::addColumn<double>("binSeconds");
        QTest::newRow("few: raw") << 500 << 3650 * 86400.0 << 400 << 0.0;
        QTest::newRow("a year per day") << 5000 << 365 * 86400.0 << 400 << 86400.0;
        QTest::newRow("ten years per week") << 20000 << 3650 * 86400.0 << 600 << 7 * 86400.0;
        QTest::newRow("ten years, narrow: 30 days") << 20000 << 3650 * 86400.0 << 200 << 30 * 86400.0;
        QTest::newRow("a century: years") << 20000 << 36500 * 86400.0 << 200 << 365.25 * 86400.0;
    }
    void binning()
    {
        QFETCH(int, marks);
        QFETCH(double, span);
        QFETCH(int, maxBins);
        QFETCH(double, binSeconds);
        std::vector<HistoryMark> m;
        for (int i = 0; i < marks; ++i) m.push_back({1.5e9 + span * i / marks, QString()});
        const HistoryPoints p = historyPoints(m, 1.5e9, 1.5e9 + span, 1000, maxBins);
        QCOMPARE(p.binSeconds, binSeconds);
        QCOMPARE(p.marks, marks);
        int counted = 0;
        for (int c : p.counts) counted += c;
        QCOMPARE(counted, marks);
        QVERIFY(p.t.size() <= std::max(marks <= 1000 ? marks : 0, maxBins + 1));
        QVERIFY(std::is_sorted(p.t.begin(), p.t.end()));
        // Only the marks in the range count.
        const HistoryPoints half = historyPoints(m, 1.5e9, 1.5e9 + span / 2, 1000, maxBins);
        QVERIFY(std::abs(half.marks - marks / 2) <= 1);
    }

    void showsWhatTheLedgerHolds()
    {
        DeviceHistoryView view;
        view.resize(1400, 800);
        view.show();
        view.load(QString(), qs(kSerial));
        QVERIFY(waitShown(view));
        const DeviceHistory& h = view.history();
        QVERIFY2(h.error.isEmpty(), qPrintable(h.error));
        QCOMPARE(h.lane(HistoryLane::Xid).size(), m_xids);
        QCOMPARE(h.lane(HistoryLane::SXid).size(), m_sxids);
        QCOMPARE(h.lane(HistoryLane::Reset).size(), m_resets);
        QCOMPARE(h.lane(HistoryLane::Health).size(), m_snapshots);
        QCOMPARE(h.lane(HistoryLane::Flags).size(), m_flagged);
        QCOMPARE(h.lane(HistoryLane::Boot).size(), m_boots);
        QCOMPARE(h.lane(HistoryLane::Campaign).size(), m_campaigns);
        QCOMPARE(h.lane(HistoryLane::Evidence).size(), m_bundles);
        size_t identities = 0;
        for (const TimelineEntry& e : coreTimeline().entries) identities += e.kind == "identity";
        QVERIFY(identities >= 2);  // node1, then node2
        QCOMPARE(h.lane(HistoryLane::Identity).size(), identities);
        QCOMPARE(h.undated, size_t(0));

        // The whole history: busy rows drawn as counts per bin, every event counted once.
        const HistoryPoints& all = view.shownPoints(HistoryLane::Xid);
        QVERIFY(all.binSeconds > 0);
        QVERIFY(all.t.size() <= view.width());
        int counted = 0;
        for (int c : all.counts) counted += c;
        QCOMPARE(size_t(counted), m_xids);
        QCOMPARE(size_t(view.laneGraph(HistoryLane::Xid)->data()->size()), size_t(all.t.size()));
        // Zoomed to a week: the events themselves, at their times.
        view.setTimeRange(seconds(1000), seconds(1007));
        QTRY_COMPARE(view.shownPoints(HistoryLane::Xid).binSeconds, 0.0);
        const HistoryPoints& week = view.shownPoints(HistoryLane::Xid);
        QCOMPARE(week.t.size(), 7 * kXidPerDay);
        QCOMPARE(week.t.first(), seconds(1000, 1));
        QCOMPARE(view.laneGraph(HistoryLane::Xid)->data()->size(), 7 * kXidPerDay);

        // Campaign rates with their intervals, failing ones apart.
        QCOMPARE(size_t(view.failingRates()->data()->size()), m_failing);
        QCOMPARE(size_t(view.cleanRates()->data()->size()), m_campaigns - m_failing);
        QCOMPARE(view.failingIntervals()->dataCount(), int(m_failing));
        const double rate = view.failingRates()->data()->at(0)->value;
        QCOMPARE(rate, 4.0 / 200);
        QVERIFY(view.failingIntervals()->data()->at(0).errorPlus > 0);
        QCOMPARE(view.failingRates()->data()->at(0)->key, seconds(kFirstFailingDay, 12));
        // Counters: their growth on the right axis.
        QVERIFY(h.counters.size() >= 2);
        QCOMPARE(h.counters[0].name, QStringLiteral("ecc_corrected_aggregate"));
        QCOMPARE(h.counters[0].value.last(), double((kDays - 1) / 10));

        // The rules that fired, with core's reasons.
        const LedgerTimeline core = coreTimeline();
        QVERIFY(!core.findings.empty());
        // One row per rule and conclusion in the order they first fired; a rule that fired more
        // than once holds every finding, in order, as its children.
        QStringList order, rules;
        std::map<QString, QStringList> reasons;  // by rule and conclusion, in core's order
        for (const auto& f : core.findings) {
            const QString key = qs(f.rule) + '|' + qs(f.conclusion);
            if (!reasons.count(key)) order << key;
            reasons[key] << qs(f.reason);
        }
        QCOMPARE(view.rules()->topLevelItemCount(), int(order.size()));
        QVERIFY2(view.rules()->topLevelItemCount() < int(core.findings.size()), "repeated rules are grouped");
        int findings = 0;
        for (int i = 0; i < view.rules()->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* item = view.rules()->topLevelItem(i);
            const QString key = item->data(0, Qt::UserRole).toString() + '|' + item->text(0);
            QCOMPARE(key, order[i]);
            const QStringList& want = reasons[key];
            if (want.size() == 1) {
                QCOMPARE(item->childCount(), 0);
                QCOMPARE(item->text(1), want.front());
            } else {
                QCOMPARE(item->childCount(), int(want.size()));
                QVERIFY2(item->text(1).startsWith(QString::number(want.size()) + " times") &&
                             item->text(1).endsWith(want.back()),
                         qPrintable(item->text(1)));
                for (int c = 0; c < item->childCount(); ++c) QCOMPARE(item->child(c)->text(1), want[c]);
            }
            findings += std::max(1, item->childCount());
            rules << item->data(0, Qt::UserRole).toString();
        }
        QCOMPARE(findings, int(core.findings.size()));
        // Choosing a rule shows its whole reason where the marks are named.
        view.rules()->setCurrentItem(view.rules()->topLevelItem(0));
        QCOMPARE(view.detail()->text(), reasons[order[0]].back());
        QVERIFY2(rules.contains("rma_candidate") && rules.contains("moved"), qPrintable(rules.join(',')));

        // A click names the fact under it: the first failing campaign.
        view.setTimeRange(seconds(kFirstFailingDay - 20), seconds(kFirstFailingDay + 30));
        QTRY_COMPARE(view.shownPoints(HistoryLane::Campaign).t.size(), 2);
        view.plot()->replot();
        QCPGraph* failing = view.failingRates();
        const QPointF pixel(failing->keyAxis()->coordToPixel(seconds(kFirstFailingDay, 12)),
                            failing->valueAxis()->coordToPixel(rate));
        const QString fact = view.factAt(pixel);
        QVERIFY2(fact.contains("campaign") && fact.contains("transient"), qPrintable(fact));
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, pixel.toPoint());
        QCOMPARE(view.detail()->text(), fact);
    }

    void errorsNameTheGpuAndTheLedger()
    {
        DeviceHistoryView view;
        QSignalSpy failed(&view, &DeviceHistoryView::failed);
        view.load(QString(), QStringLiteral("NO-SUCH-GPU"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 30000);
        QVERIFY2(failed[0][0].toString().contains("NO-SUCH-GPU"), qPrintable(failed[0][0].toString()));
        QVERIFY(view.status()->text().contains("NO-SUCH-GPU"));
        QCOMPARE(view.laneGraph(HistoryLane::Xid)->data()->size(), 0);

        const QString missing = m_dir.filePath("absent.sqlite");
        view.load(missing, qs(kSerial));
        QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 2, 30000);
        QVERIFY2(failed[1][0].toString().contains(missing), qPrintable(failed[1][0].toString()));
        QVERIFY(!QFileInfo::exists(missing));  // reading creates nothing
    }

    void aNewerRequestSupersedesAnOlder()
    {
        DeviceHistoryView view;
        QSignalSpy shown(&view, &DeviceHistoryView::historyShown);
        QSignalSpy failed(&view, &DeviceHistoryView::failed);
        view.load(QString(), QStringLiteral("NO-SUCH-GPU"));
        view.load(QString(), qs(kSerial));
        QTRY_COMPARE_WITH_TIMEOUT(shown.size(), 1, 120000);
        QTest::qWait(200);
        QCOMPARE(failed.size(), 0);  // the first answer was dropped
        QCOMPARE(view.history().key, qs(kSerial));
    }

    void opensFromTheDevicesPanel()
    {
        DevicesPanel panel;
        panel.showInventoryJson(
            QByteArray::fromStdString(json{
                {"cuda_built", true},
                {"cuda_available", true},
                {"gpus",
                 {{{"index", 0}, {"uuid", kUuid}, {"pci_bus_id", kBus}, {"nvml", {{"serial", kSerial}}}}}}}
                                          .dump()),
            "worker");
        QCOMPARE(panel.localDevices()->rowCount(), 1);
        QCOMPARE(panel.localDevices()->contextMenuPolicy(), Qt::ActionsContextMenu);
        QVERIFY(panel.localDevices()->actions().contains(panel.localHistoryAction()));
        panel.localDevices()->setCurrentCell(0, DevicesPanel::GpuName);
        panel.localHistoryAction()->trigger();
        auto* view = panel.findChild<DeviceHistoryView*>();
        QVERIFY(view);
        QVERIFY(view->isWindow());
        QCOMPARE(view->keyEdit()->text(), qs(kSerial));
        QVERIFY(view->ledgerEdit()->text().isEmpty());  // the default ledger
        QVERIFY(waitShown(*view));
        QCOMPARE(view->history().lane(HistoryLane::Xid).size(), m_xids);
        view->close();
        QTRY_VERIFY(!panel.findChild<DeviceHistoryView*>());  // deleted on close
    }

    void opensFromTheFleetTable()
    {
        json gpus = json::array({{{"index", 0}, {"uuid", kUuid}, {"serial", kSerial}, {"pci_bus_id", kBus}}});
        const json node = {
            {"trace", "t.h5"},
            {"targets",
             {{{"target", "cuda:0"},
               {"verdict", "healthy"},
               {"runs", 10},
               {"failures", 0},
               {"rate", 0.0},
               {"ci", {0.0, 0.28}},
               {"peer_key", "H100"}}}},
            {"ops",
             {{{"index", 0},
               {"op", "gemm"},
               {"name", "fc"},
               {"targets", {{"cuda:0", {{"runs", 10}, {"failures", 0}, {"first_digest", "d"}}}}}}}},
            {"node", {{"host", "node2"}, {"task", "0"}, {"inventory", {{"gpus", gpus}}}}}};
        FleetMerger merger;
        QVERIFY(merger.add("/fleet/0.h5", node).ok());
        FleetView fleet;
        fleet.setReport(merger.result().value());
        QCOMPARE(fleet.proxy()->rowCount(), 1);
        fleet.table()->setCurrentIndex(fleet.proxy()->index(0, 0));
        fleet.historyAction()->trigger();
        auto* view = fleet.findChild<DeviceHistoryView*>();
        QVERIFY(view);
        QCOMPARE(view->keyEdit()->text(), qs(kSerial));
        QVERIFY(waitShown(*view));
        QCOMPARE(view->history().lane(HistoryLane::Campaign).size(), m_campaigns);
    }

    void opensFromTheEvidenceDialog()
    {
        EvidenceExportDialog dialog;
        dialog.historyButton()->click();
        QVERIFY(!dialog.findChild<DeviceHistoryView*>());  // no suspect named: says so
        QVERIFY(dialog.status()->text().contains("serial or UUID"));
        dialog.findChild<QLineEdit*>("evidenceSuspect")->setText(qs(kUuid));
        dialog.historyButton()->click();
        auto* view = dialog.findChild<DeviceHistoryView*>();
        QVERIFY(view);
        QVERIFY(waitShown(*view));
        QVERIFY(view->history().serials.contains(qs(kSerial)));
    }

    // Ten years drawn and zoomed, the longest GUI-thread stall measured.
    void drawsTenYearsWithoutAStall()
    {
        DeviceHistoryView view;
        view.resize(1600, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        test::StallProbe probe(QStringLiteral("device history, ten years"));
        QSignalSpy shown(&view, &DeviceHistoryView::historyShown);
        probe.step(QStringLiteral("load"));
        view.load(QString(), qs(kSerial));
        // The probe's own waits (StallProbe::turn): QTest's sleep between turns would count.
        QVERIFY(test::StallProbe::turnUntil([&] { return shown.size() == 1; }, 120000));
        probe.step(QStringLiteral("draw the whole history"));
        test::StallProbe::turn(100);
        double slowestReplot = view.plot()->replotTime();
        const double first = view.history().first, last = view.history().last;
        const double year = 365.25 * 86400;
        const std::vector<std::pair<QString, std::pair<double, double>>> zooms = {
            {"a year", {last - year, last}},
            {"a month", {last - year / 12, last}},
            {"a week", {last - 7 * 86400.0, last}},
            {"pan a month back", {last - year / 6, last - year / 12}},
            {"five years", {first, first + 5 * year}},
            {"the whole history", {first, last}}};
        for (const auto& [name, range] : zooms) {
            probe.step(QStringLiteral("zoom to ") + name);
            view.setTimeRange(range.first, range.second);
            test::StallProbe::turn(60);
            slowestReplot = std::max(slowestReplot, view.plot()->replotTime());
        }
        probe.step(QStringLiteral("wheel zoom"));
        for (int i = 0; i < 10; ++i) {
            QWheelEvent wheel(QPointF(800, 200), view.plot()->mapToGlobal(QPointF(800, 200)), QPoint(),
                              QPoint(0, i < 5 ? 120 : -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                              false);
            QApplication::sendEvent(view.plot(), &wheel);
            test::StallProbe::turn(30);
            slowestReplot = std::max(slowestReplot, view.plot()->replotTime());
        }
        probe.step(QStringLiteral("end"));
        qInfo("%s", qPrintable(probe.summary()));
        // The drawing alone: replots of the whole history, each timed.
        view.showAll();
        QTest::qWait(60);
        std::vector<double> replots;
        for (int i = 0; i < 21; ++i) {
            QElapsedTimer clock;
            clock.start();
            view.plot()->replot(QCustomPlot::rpImmediateRefresh);
            replots.push_back(double(clock.nsecsElapsed()) / 1e6);
        }
        std::sort(replots.begin(), replots.end());
        const int binnedPoints = int(view.shownPoints(HistoryLane::Xid).t.size());
        // The anchor: the same plot drawing every mark of ten years.
        view.setMaxRawMarks(std::numeric_limits<int>::max());
        QCOMPARE(size_t(view.shownPoints(HistoryLane::Xid).t.size()), m_xids);
        std::vector<double> raw;
        for (int i = 0; i < 21; ++i) {
            QElapsedTimer clock;
            clock.start();
            view.plot()->replot(QCustomPlot::rpImmediateRefresh);
            raw.push_back(double(clock.nsecsElapsed()) / 1e6);
        }
        std::sort(raw.begin(), raw.end());
        qInfo(
            "anchor, every mark drawn (%zu Xid points): median %.1f ms, slowest %.1f ms; ratio binned / raw "
            "(medians) %.2f",
            m_xids, raw[raw.size() / 2], raw.back(), replots[replots.size() / 2] / raw[raw.size() / 2]);
        qInfo(
            "replot of the whole history (%d Xid points drawn for %zu events): median %.1f ms, "
            "slowest %.1f ms of %zu (goal 16 ms); slowest replot during the journey %.1f ms",
            binnedPoints, m_xids, replots[replots.size() / 2], replots.back(), replots.size(), slowestReplot);
        QVERIFY2(probe.longest() < test::StallProbe::kGrossStallMs, qPrintable(probe.summary()));
        QVERIFY(probe.samples() > 10);
    }

    void screenshot()
    {
        const QString out = qEnvironmentVariable("FAULTLINE_DOC_SCREENSHOTS");
        if (out.isEmpty()) QSKIP("FAULTLINE_DOC_SCREENSHOTS is not set");
        DeviceHistoryView view;
        view.resize(1500, 900);
        view.show();
        view.load(QString(), qs(kSerial));
        QVERIFY(waitShown(view));
        view.setTimeRange(seconds(kFirstFailingDay - 400), seconds(kFirstFailingDay + 200));
        QTest::qWait(300);
        QVERIFY(view.grab().save(out + "/screenshot-device-history.png"));
    }
};

QTEST_MAIN(TestDeviceHistoryView)
#include "test_device_history_view.moc"
