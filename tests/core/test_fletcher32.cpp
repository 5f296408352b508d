// HDF5's fletcher32 checksum (core/io/Fletcher32), computed blockwise in lanes, equals HDF5's own
// word-by-word recurrence (written out below as HDF5 defines it) on buffers of every length
// class (empty, odd, shorter than a lane row, across block edges, megabytes) and content (zeros,
// all ones, whose sums are multiples of 65535, random, sparse); a stored checksum matches in
// HDF5's byte order and in the pre-1.6.3 half-swapped form, and not after one bit flips.
#include <QTest>

#include <random>
#include <vector>

#include "core/io/Fletcher32.h"

using faultline::hdf5::fletcher32;
using faultline::hdf5::fletcher32Matches;

namespace {

// HDF5's H5_checksum_fletcher32, word by word: the oracle.
uint32_t hdf5Fletcher32(const unsigned char* data, size_t bytes)
{
    size_t len = bytes / 2;
    uint32_t sum1 = 0, sum2 = 0;
    while (len) {
        size_t tlen = len > 360 ? 360 : len;
        len -= tlen;
        do {
            sum1 += (uint32_t(data[0]) << 8) | uint32_t(data[1]);
            data += 2;
            sum2 += sum1;
        } while (--tlen);
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (bytes % 2) {
        sum1 += uint32_t(*data) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return (sum2 << 16) | sum1;
}

std::vector<unsigned char> filled(size_t bytes, int pattern, std::mt19937_64& rng)
{
    std::vector<unsigned char> b(bytes);
    for (size_t i = 0; i < bytes; ++i) {
        switch (pattern) {
            case 0:
                b[i] = 0;
                break;
            case 1:
                b[i] = 0xff;
                break;
            case 2:
                b[i] = static_cast<unsigned char>(rng());
                break;
            default:
                b[i] = rng() % 97 == 0 ? static_cast<unsigned char>(rng()) : 0;
        }
    }
    return b;
}

}  // namespace

class TestFletcher32 : public QObject {
    Q_OBJECT

private slots:
    void equalsHdf5sRecurrence()
    {
        std::mt19937_64 rng(32);
        std::vector<size_t> sizes;
        for (size_t n = 0; n <= 80; ++n) sizes.push_back(n);
        for (size_t n : {719, 720, 721, 4095, 4096, 4097, 4111, 8191, 65537, 1 << 20, (1 << 20) + 3})
            sizes.push_back(size_t(n));
        for (int i = 0; i < 40; ++i) sizes.push_back(size_t(rng() % 200000));
        for (size_t n : sizes)
            for (int pattern = 0; pattern < 4; ++pattern) {
                const std::vector<unsigned char> b = filled(n, pattern, rng);
                const uint32_t want = hdf5Fletcher32(b.data(), b.size());
                const uint32_t got = fletcher32(b.data(), b.size());
                QVERIFY2(got == want, qPrintable(QString("%1 bytes, pattern %2: %3, HDF5 %4")
                                                     .arg(n)
                                                     .arg(pattern)
                                                     .arg(got, 8, 16, QChar('0'))
                                                     .arg(want, 8, 16, QChar('0'))));
            }
    }

    void storedChecksumMatches()
    {
        std::mt19937_64 rng(7);
        std::vector<unsigned char> b = filled(3001, 2, rng);
        const uint32_t sum = hdf5Fletcher32(b.data(), b.size());
        for (int shift : {0, 8, 16, 24}) b.push_back(static_cast<unsigned char>(sum >> shift));
        QVERIFY(fletcher32Matches(b.data(), b.size()));
        // HDF5 before 1.6.3: the bytes of each 16-bit half swapped.
        std::swap(b[b.size() - 4], b[b.size() - 3]);
        std::swap(b[b.size() - 2], b[b.size() - 1]);
        QVERIFY(fletcher32Matches(b.data(), b.size()));
        std::swap(b[b.size() - 4], b[b.size() - 3]);
        std::swap(b[b.size() - 2], b[b.size() - 1]);
        b[1234] ^= 0x04;
        QVERIFY(!fletcher32Matches(b.data(), b.size()));
        QVERIFY(!fletcher32Matches(b.data(), 3));
    }
};

QTEST_GUILESS_MAIN(TestFletcher32)
#include "test_fletcher32.moc"
