// Chunked HDF5 tensors (h5py's files, tests/fixtures/write_h5_chunks.py) read chunk by chunk
// (core/io/Hdf5ChunkReader): every range of every case equals the bytes h5py wrote, whatever the
// rank, chunk shape, filters (none, shuffle, deflate, fletcher32, combined, chunks whose filter
// was skipped), byte order or unwritten chunks; pipelines it does not undo (scale-offset) read
// through HDF5 alike; several threads reading at once get the same bytes; a corrupt chunk (bad
// deflate data, a failed fletcher32 checksum) is an error naming the file and the tensor.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "core/TensorFile.h"
#include "core/compare/CompareJson.h"
#include "core/compare/CompareRun.h"
#include "core/compare/TensorComparer.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

QByteArray readRange(const TensorFile& f, size_t index, uint64_t first, uint64_t count)
{
    QByteArray out(qsizetype(count * dtypeSize(f.tensors()[index].dtype)), '\0');
    const Status s = f.read(index, first, count, out.data());
    return s ? out : QByteArray("ERROR: ") + s.message().c_str();
}

}  // namespace

class TestHdf5Chunks : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::vector<std::string> m_cases;
    std::unique_ptr<TensorFile> m_file;

    QByteArray expected(const std::string& name) const
    {
        QFile f(m_dir.filePath(QString::fromStdString(name) + ".bin"));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    // A case of chunks.h5: its tensor, what h5py wrote, its element count and size.
    struct Case {
        std::optional<size_t> index;
        QByteArray want;
        uint64_t n = 0;
        unsigned size = 1;
    };
    Case caseOf(const std::string& name) const
    {
        Case c;
        c.index = m_file->find(name);
        if (!c.index) return c;
        c.want = expected(name);
        c.n = m_file->tensors()[*c.index].elementCount();
        c.size = dtypeSize(m_file->tensors()[*c.index].dtype);
        return c;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        FL_WRITE_FIXTURE("write_h5_chunks.py", QStringList{m_dir.path()});
        QFile cases(m_dir.filePath("cases.json"));
        QVERIFY(cases.open(QIODevice::ReadOnly));
        m_cases = nlohmann::json::parse(cases.readAll().toStdString()).get<std::vector<std::string>>();
        auto f = openTensorFile(m_dir.filePath("chunks.h5").toStdString());
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        m_file = std::move(*f);
    }

    // Whole tensors, then ranges of many sizes and offsets (pieces of a chunk, across chunk and
    // row edges, several bands), each equal to the same slice of what h5py wrote.
    void everyRangeIsWhatWasWritten()
    {
        std::mt19937_64 rng(27);
        for (const std::string& name : m_cases) {
            const auto [index, want, n, size] = caseOf(name);
            QVERIFY2(index, name.c_str());
            QCOMPARE(uint64_t(want.size()), n * size);
            QVERIFY2(readRange(*m_file, *index, 0, n) == want, name.c_str());
            for (int trial = 0; trial < 60; ++trial) {
                const uint64_t first = rng() % n;
                const uint64_t count = 1 + rng() % std::min<uint64_t>(n - first, trial % 3 ? 97 : 5000);
                const QByteArray got = readRange(*m_file, *index, first, count);
                QVERIFY2(got == want.mid(qsizetype(first * size), qsizetype(count * size)),
                         qPrintable(QString("%1 [%2, +%3): %4")
                                        .arg(QString::fromStdString(name))
                                        .arg(first)
                                        .arg(count)
                                        .arg(got.startsWith("ERROR") ? got : QByteArray("wrong bytes"))));
            }
        }
    }

    // The same ranges as runs in place (TensorFile::runs, the compare engine's way to read
    // chunked tensors without a copy): in order, covering the range, holding the same bytes.
    void runsAreWhatWasWritten()
    {
        std::mt19937_64 rng(31);
        size_t inPlace = 0;
        for (const std::string& name : m_cases) {
            const auto [index, want, n, size] = caseOf(name);
            QVERIFY2(index, name.c_str());
            for (int trial = 0; trial < 40; ++trial) {
                const uint64_t first = trial == 0 ? 0 : rng() % n;
                const uint64_t count = trial == 0 ? n : 1 + rng() % std::min<uint64_t>(n - first, 3000);
                auto runs = m_file->runs(*index, first, count);
                QVERIFY2(runs.ok(), runs.ok() ? name.c_str() : runs.message().c_str());
                if (runs->runs.empty()) continue;  // read() then: scale-offset, misaligned chunks
                ++inPlace;
                QByteArray got;
                uint64_t next = 0;
                for (const ElementRun& r : runs->runs) {
                    QCOMPARE(r.offset, next);
                    QVERIFY(r.count > 0);
                    QCOMPARE(reinterpret_cast<uintptr_t>(r.data) % size, uintptr_t(0));
                    got.append(static_cast<const char*>(r.data), qsizetype(r.count * size));
                    next += r.count;
                }
                QCOMPARE(next, count);
                QVERIFY2(
                    got == want.mid(qsizetype(first * size), qsizetype(count * size)),
                    qPrintable(
                        QString("%1 [%2, +%3)").arg(QString::fromStdString(name)).arg(first).arg(count)));
            }
        }
        QVERIFY2(inPlace > 200, "most chunked cases are read in place");
    }

    // Comparing each chunked case with a contiguous copy of it with bits flipped gives the
    // results the same comparison of the bytes in memory gives, to the last bit of every mean:
    // the engine scans the chunks' rows in place, in element order.
    void chunkedComparesLikeMemory()
    {
        auto noisy = openTensorFile(m_dir.filePath("noisy.h5").toStdString());
        QVERIFY2(noisy.ok(), noisy.ok() ? "" : noisy.message().c_str());
        for (const std::string& name : m_cases) {
            const auto index = m_file->find(name);
            const auto other = (*noisy)->find(name);
            QVERIFY2(index && other, name.c_str());
            const TensorInfo& info = m_file->tensors()[*index];
            QFile f(m_dir.filePath(QString::fromStdString(name) + ".noisy.bin"));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray noisyBytes = f.readAll(), chunkBytes = expected(name);
            for (unsigned threads : {1u, 2u}) {
                CompareOptions options;
                options.chunkElements = 1000;  // pieces that cut chunks and rows
                options.threads = threads;
                TensorComparer comparer(options);
                auto fromFiles = comparer.compare(**noisy, *other, *m_file, *index);
                QVERIFY2(fromFiles.ok(), fromFiles.ok() ? name.c_str() : fromFiles.message().c_str());
                auto inMemory = comparer.compare(info.dtype, info.shape, noisyBytes.constData(),
                                                 chunkBytes.constData(), name);
                QVERIFY(inMemory.ok());
                QVERIFY2(fromFiles->mismatches > 0, name.c_str());
                CompareJsonOptions all;
                all.tiles = true;
                all.spatial = true;
                QVERIFY2(divergenceToJson(*fromFiles, all).dump() == divergenceToJson(*inMemory, all).dump(),
                         name.c_str());
            }
        }
    }

    // Threads reading neighbouring ranges of one tensor at once (as the compare engine's workers
    // do) share decoded chunks and get the right bytes.
    void concurrentReadersAgree()
    {
        for (const char* name : {"shuffle_gzip", "rank2_ragged", "big_endian", "gzip_skipped"}) {
            const auto index = m_file->find(name);
            QVERIFY(index);
            const QByteArray want = expected(name);
            const uint64_t n = m_file->tensors()[*index].elementCount();
            const unsigned size = dtypeSize(m_file->tensors()[*index].dtype);
            std::vector<QByteArray> got(4);
            std::vector<std::thread> threads;
            for (unsigned t = 0; t < 4; ++t)
                threads.emplace_back([&, t] {
                    QByteArray out(want.size(), '\0');
                    for (int round = 0; round < 3; ++round)
                        for (uint64_t first = (t * 331) % 977; first < n; first += 977) {
                            const uint64_t count = std::min<uint64_t>(977, n - first);
                            if (!m_file->read(*index, first, count, out.data() + first * size)) return;
                        }
                    for (uint64_t first = 0; first < std::min<uint64_t>(n, (t * 331) % 977); ++first)
                        if (!m_file->read(*index, first, 1, out.data() + first * size)) return;
                    got[t] = out;
                });
            for (std::thread& th : threads) th.join();
            for (const QByteArray& g : got) QVERIFY2(g == want, name);
        }
    }

    // A chunk whose stored bytes were overwritten, and one with a bit flipped under its fletcher32
    // checksum: errors naming the file and the tensor from the chunk reader (HDF5 never sees the
    // corrupt stream; it words a failed checksum differently), and the comparison of the other
    // tensors goes on.
    void corruptChunkIsAnErrorNamingTheFile()
    {
        const std::string path = m_dir.filePath("corrupt.h5").toStdString();
        auto f = openTensorFile(path);
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        const auto index = (*f)->find("gzip");
        QVERIFY(index);
        QByteArray buffer(64 * 100 * 8, '\0');
        const Status s = (*f)->read(*index, 0, 64 * 100, buffer.data());
        QVERIFY(!s.ok());
        QVERIFY2(s.message().rfind(path + ": tensor 'gzip': ", 0) == 0, s.message().c_str());
        QVERIFY2(s.message().find("inflate") != std::string::npos, s.message().c_str());
        const auto checked = (*f)->find("fletcher32");
        QVERIFY(checked);
        const Status c = (*f)->read(*checked, 0, 100 * 100, buffer.data());
        QVERIFY(!c.ok());
        QVERIFY2(c.message().rfind(
                     path + ": tensor 'fletcher32': a chunk does not match its fletcher32 checksum", 0) == 0,
                 c.message().c_str());
        QVERIFY2((*f)->read(*checked, 30, 70, buffer.data()).ok(), "the chunks right of it are intact");
        auto report = compareFiles(**f, *m_file);
        QVERIFY(report.ok());
        QCOMPARE(report->errors.size(), size_t(2));
        std::vector<std::string> failed{report->errors[0].name, report->errors[1].name};
        std::sort(failed.begin(), failed.end());
        QCOMPARE(failed, (std::vector<std::string>{"fletcher32", "gzip"}));
        QCOMPARE(report->tensors.size(), m_cases.size() - 2);
        for (const Divergence& d : report->tensors) QVERIFY2(d.mismatches == 0, d.name.c_str());
    }
};

QTEST_GUILESS_MAIN(TestHdf5Chunks)
#include "test_hdf5_chunks.moc"
