// nvidia-smi -q -x XML read into health snapshots (core/health/NvidiaSmiXml): drivers writing the
// v11, v12 and v13 DTDs (single/double-bit and SRAM/DRAM ECC counters, retired pages, remapped rows
// pending, failed or "N/A", the SRAM threshold flag, the recovery action, power sections under both
// names); each field checked against tests/fixtures/health. Malformed XML, entity declarations and
// other documents are errors naming the file (and line).
#include <QElapsedTimer>
#include <QtTest>

#include "core/health/NvidiaSmiXml.h"
#include "test_health_fields.h"

using namespace faultline;
using faultline::test::fixturePath;
using faultline::test::snapshotField;

class TestHealthXml : public QObject {
    Q_OBJECT

private slots:
    void fields_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("gpu");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expected");
        auto row = [](const char* file, int gpu, const char* field, const char* expected) {
            QTest::addRow("%s gpu %d %s", file, gpu, field)
                << QString(file) << gpu << QString(field) << QString(expected);
        };
        const char* v11 = "nvidia-smi-v11.xml";
        row(v11, 0, "bus", "0000:3b:00.0");
        row(v11, 0, "uuid", "GPU-3b8e5a55-1f4c-2e9b-8a5e-0c7d1e2f3a4b");
        row(v11, 0, "serial", "0323618012345");
        row(v11, 0, "product", "Tesla V100-SXM2-32GB");
        row(v11, 0, "gpu_part", "900-2G503-0430-000");
        row(v11, 0, "board_part", "");
        row(v11, 0, "vbios", "88.00.80.00.01");
        row(v11, 0, "inforom", "G503.0203.00.05");
        row(v11, 0, "inforom_ecc", "5.0");
        row(v11, 0, "driver", "470.256.02");
        row(v11, 0, "cuda", "11.4");
        row(v11, 0, "timestamp", "Mon Nov 30 08:10:00 2026");
        row(v11, 0, "ecc_enabled", "yes");
        row(v11, 0, "corrected_volatile", "3");
        row(v11, 0, "uncorrected_volatile", "1");
        row(v11, 0, "corrected_aggregate", "43");
        row(v11, 0, "uncorrected_aggregate", "2");
        row(v11, 0, "aggregate.single_bit.l2_cache", "2");
        row(v11, 0, "aggregate.single_bit.texture_memory", "(absent)");
        row(v11, 0, "volatile.double_bit.device_memory", "1");
        row(v11, 0, "retired_sbe", "4");
        row(v11, 0, "retired_dbe", "2");
        row(v11, 0, "retired_pending", "yes");
        row(v11, 0, "remapped_available", "no");
        row(v11, 0, "remap_pending", "n/a");
        row(v11, 0, "sram_threshold_exceeded", "n/a");
        row(v11, 0, "recovery_action", "");
        row(v11, 0, "gpu_temp", "41");
        row(v11, 0, "memory_temp", "39");
        row(v11, 0, "power_draw", "57.32");
        row(v11, 0, "power_limit", "300");
        row(v11, 0, "clock.graphics_clock", "1312");
        row(v11, 0, "clock.mem_clock", "877");

        const char* v12 = "nvidia-smi-v12.xml";
        row(v12, 0, "bus", "0000:18:00.0");
        row(v12, 0, "architecture", "Ampere");
        row(v12, 0, "board_part", "692-2G506-0210-002");
        row(v12, 0, "gpu_part", "20B2-895-A1");
        row(v12, 0, "corrected_volatile", "12");
        row(v12, 0, "uncorrected_volatile", "1");
        row(v12, 0, "corrected_aggregate", "135");
        row(v12, 0, "uncorrected_aggregate", "1");
        row(v12, 0, "aggregate.dram_correctable", "130");
        row(v12, 0, "retired_sbe", "n/a");
        row(v12, 0, "retired_pending", "n/a");
        row(v12, 0, "remapped_available", "yes");
        row(v12, 0, "remapped_corr", "0");
        row(v12, 0, "remapped_unc", "1");
        row(v12, 0, "remap_pending", "yes");
        row(v12, 0, "remap_failure", "no");
        row(v12, 0, "histogram.max", "639");
        row(v12, 0, "histogram.partial", "1");
        row(v12, 0, "power_draw", "71.5");
        row(v12, 0, "power_limit", "400");
        row(v12, 1, "bus", "0000:19:00.0");
        row(v12, 1, "serial", "1321020031338");
        row(v12, 1, "remap_pending", "no");
        row(v12, 1, "uncorrected_aggregate", "0");
        row(v12, 1, "power_draw", "n/a");

        const char* v13 = "nvidia-smi-v13.xml";
        row(v13, 0, "bus", "0000:86:00.0");
        row(v13, 0, "architecture", "Hopper");
        row(v13, 0, "corrected_volatile", "2");
        row(v13, 0, "uncorrected_volatile", "6");
        row(v13, 0, "corrected_aggregate", "267");
        row(v13, 0, "uncorrected_aggregate", "20");
        row(v13, 0, "aggregate.sram_uncorrectable_parity", "4");
        row(v13, 0, "aggregate.sram_uncorrectable_secded", "9");
        row(v13, 0, "sram_threshold_exceeded", "yes");
        row(v13, 0, "sram_source.sram_l2", "8");
        row(v13, 0, "sram_source.sram_sm", "5");
        row(v13, 0, "remap_failure", "yes");
        row(v13, 0, "remap_pending", "no");
        row(v13, 0, "remapped_unc", "7");
        row(v13, 0, "histogram.none", "1");
        row(v13, 0, "recovery_action", "Drain and Reset");
        row(v13, 0, "power_draw", "118.45");
        row(v13, 0, "power_limit", "700");
        row(v13, 0, "memory_temp", "53");
        row(v13, 0, "driver", "570.172.08");
    }
    void fields()
    {
        QFETCH(QString, file);
        QFETCH(int, gpu);
        QFETCH(QString, field);
        QFETCH(QString, expected);
        auto snapshots = readNvidiaSmiXml(fixturePath(file).toStdString());
        QVERIFY2(snapshots.ok(), snapshots.ok() ? "" : snapshots.message().c_str());
        QVERIFY(gpu < int(snapshots->size()));
        QCOMPARE(snapshotField((*snapshots)[size_t(gpu)], field), expected);
        QCOMPARE(QString::fromStdString((*snapshots)[size_t(gpu)].source), fixturePath(file));
    }

    void errors_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("malformed") << "malformed.xml"
                                   << "malformed.xml:7: malformed XML: ";
        QTest::newRow("entity declarations") << "entities.xml"
                                             << "entities.xml:3: the DOCTYPE declares entities";
        QTest::newRow("another document") << "not-nvidia-smi.xml"
                                          << "root element is <html>";
        QTest::newRow("a log, not XML") << "dmesg-plain.log"
                                        << "malformed XML: No document element found";
        QTest::newRow("missing") << "no-such.xml"
                                 << "no-such.xml: no such file";
    }
    void errors()
    {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        auto snapshots = readNvidiaSmiXml(fixturePath(file).toStdString());
        QVERIFY(!snapshots.ok());
        const QString message = QString::fromStdString(snapshots.message());
        QVERIFY2(message.startsWith(fixturePath(file)), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message));
    }

    void keyedOnElementNamesNotTheDtd()
    {
        // A DTD version nobody has seen yet: the same element names still read.
        const std::string xml =
            "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v99.dtd\">\n"
            "<nvidia_smi_log><gpu "
            "id=\"00000000:0A:00.0\"><serial>42</serial><new_section><x>1</x></new_section>"
            "<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>0</remapped_row_unc>"
            "<remapped_row_pending>No</remapped_row_pending><remapped_row_failure>Yes</remapped_row_failure>"
            "</remapped_rows></gpu></nvidia_smi_log>";
        auto s = parseNvidiaSmiXml(xml, "v99.xml");
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(snapshotField((*s)[0], "bus"), QString("0000:0a:00.0"));
        QCOMPARE(snapshotField((*s)[0], "serial"), QString("42"));
        QCOMPARE(snapshotField((*s)[0], "remap_failure"), QString("yes"));
    }

    void hugeInputIsRefusedBeforeParsing()
    {
        std::string xml = "<nvidia_smi_log>" + std::string(kMaxXmlBytes, ' ') + "</nvidia_smi_log>";
        auto s = parseNvidiaSmiXml(xml, "huge.xml");
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.message()).startsWith("huge.xml: larger than"),
                 s.message().c_str());
    }

    void manyGpuElementsAreLinearOrRefused_data()
    {
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("error");
        // Without <timestamp>, <driver_version> or <cuda_version>, each <gpu> used to search the
        // root's children for them: 80,000 empty <gpu> elements took 148 s.
        QTest::newRow("4,096 empty <gpu>") << 4096 << "";
        QTest::newRow("80,000 empty <gpu>") << 80000 << "many.xml: more than 4096 <gpu> elements; refused";
    }
    void manyGpuElementsAreLinearOrRefused()
    {
        QFETCH(int, gpus);
        QFETCH(QString, error);
        std::string xml = "<nvidia_smi_log>";
        for (int i = 0; i < gpus; ++i) xml += "<gpu/>";
        xml += "</nvidia_smi_log>";
        QElapsedTimer timer;
        timer.start();
        auto s = parseNvidiaSmiXml(xml, "many.xml");
        const qint64 ms = timer.elapsed();
        QVERIFY2(ms < 5000, qPrintable(QString("%1 ms").arg(ms)));
        if (error.isEmpty()) {
            QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
            QCOMPARE(int(s->size()), gpus);
        } else {
            QVERIFY(!s.ok());
            QVERIFY2(QString::fromStdString(s.message()).startsWith(error), s.message().c_str());
        }
    }

    void tooManyTagsAreRefusedBeforeParsing()
    {
        // 64 MiB of empty elements would be about 16 million DOM nodes (1 GiB).
        std::string xml = "<nvidia_smi_log><gpu>";
        for (size_t i = 0; i < kMaxXmlTags; ++i) xml += "<a/>";
        xml += "</gpu></nvidia_smi_log>";
        auto s = parseNvidiaSmiXml(xml, "tags.xml");
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.message()).startsWith("tags.xml: more than 4000000 XML tags"),
                 s.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestHealthXml)
#include "test_health_xml.moc"
