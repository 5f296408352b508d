#pragma once
// Which bits differ: one bar per bit position (0 = LSB) of the selected entry's mismatches,
// coloured by field (sign / exponent / mantissa, or value for integers), with a legend. The
// set shown: all mismatches (Divergence::bits), beyond tolerance, or anomalies.
#include <QWidget>
#include <memory>
#include <vector>

#include "views/incident/Incident.h"

class QComboBox;
class QCustomPlot;
class QCPBars;
class QCPTextElement;
class QCPItemText;

namespace faultline::views {

class BitHistogramView : public QWidget {
    Q_OBJECT
public:
    enum class Set { Mismatches, Beyond, Anomalies };

    explicit BitHistogramView(QWidget* parent = nullptr);

    // Shows entry `entryId` of `incident`; nullptr clears.
    void setEntry(std::shared_ptr<const Incident> incident, int entryId);
    void setSet(Set set);

    // The bar height per bit position as drawn (tests, export).
    std::vector<double> shownCounts() const;
    QCustomPlot* plot() const { return m_plot; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemText* m_message = nullptr;
    QComboBox* m_setBox = nullptr;
    std::vector<QCPBars*> m_bars;  // sign, exponent, mantissa, value
    std::shared_ptr<const Incident> m_incident;
    int m_entryId = -1;
    Set m_set = Set::Mismatches;
};

}  // namespace faultline::views
