// SPDX-License-Identifier: MIT
#include "ui/talkmode.h"

#include <QApplication>
#include <QKeyEvent>
#include <QMainWindow>

#include "ui/document.h"

#include <algorithm>

namespace memledger::ui {

namespace {

// Large enough for the back of a room, from the user's own font size.
constexpr double kTalkFontScale = 1.6;

} // namespace

TalkMode::TalkMode(QMainWindow *window, QWidget *controls, Document *document, QObject *parent)
    : QObject(parent)
    , m_window(window)
    , m_controls(controls)
    , m_document(document)
{ }

void TalkMode::start(const Deck &deck, bool hideControls)
{
    if (deck.slides.empty())
        return;
    m_deck = deck;
    m_slide = 0;
    if (!m_active) {
        m_controlsWereVisible = m_controls && !m_controls->isHidden(); // hidden by the user, not by an unshown window
        m_savedLedgerConfig = m_document->ledgerConfig();
        m_savedConfig = m_document->config();
        m_font = m_window->font();
        m_wasMaximized = m_window->isMaximized();
        m_geometry = m_window->geometry();
        QFont large = m_font;
        large.setPointSizeF(m_font.pointSizeF() * kTalkFontScale);
        m_window->setFont(large);
        m_window->showFullScreen();
        qApp->installEventFilter(this);
        m_active = true;
    }
    if (m_controls)
        m_controls->setVisible(!hideControls);
    m_document->setConfig(m_deck.slides.front());
    Q_EMIT started();
    Q_EMIT slideChanged(m_slide, slideCount());
}

void TalkMode::stop()
{
    if (!m_active)
        return;
    qApp->removeEventFilter(this);
    m_active = false;
    m_window->setFont(m_font);
    if (m_controls)
        m_controls->setVisible(m_controlsWereVisible); // the plan panel as the user left it (View > Plan)
    if (m_wasMaximized) {
        m_window->showMaximized();
    } else {
        m_window->showNormal();
        // Where and how large it was: a slide may have grown the window (issue 34, item 16), and
        // showNormal() alone kept that.
        m_window->setGeometry(m_geometry);
    }
    // The last valid plan first, so that an invalid edit the user had open
    // comes back beside its own last valid ledger, not a slide's.
    if (m_savedLedgerConfig != m_savedConfig)
        m_document->setConfig(m_savedLedgerConfig);
    m_document->setConfig(m_savedConfig);
    Q_EMIT stopped();
}

SlideShow TalkMode::show() const
{
    if (!m_active || m_slide < 0 || static_cast<std::size_t>(m_slide) >= m_deck.shows.size())
        return {};
    return m_deck.shows[static_cast<std::size_t>(m_slide)];
}

void TalkMode::step(int delta)
{
    if (!m_active || m_deck.slides.empty())
        return;
    const int next = std::clamp(m_slide + delta, 0, slideCount() - 1);
    if (next == m_slide)
        return;
    m_slide = next;
    m_document->setConfig(m_deck.slides[static_cast<std::size_t>(m_slide)]);
    Q_EMIT slideChanged(m_slide, slideCount());
}

bool TalkMode::eventFilter(QObject *watched, QEvent *event)
{
    if (m_active && event->type() == QEvent::KeyPress) {
        switch (static_cast<QKeyEvent *>(event)->key()) {
        case Qt::Key_Right:
        case Qt::Key_PageDown:
        case Qt::Key_Space:
            step(+1);
            return true;
        case Qt::Key_Left:
        case Qt::Key_PageUp:
        case Qt::Key_Backspace:
            step(-1);
            return true;
        case Qt::Key_Escape:
            stop();
            return true;
        default:
            break;
        }
    }
    return QObject::eventFilter(watched, event);
}

} // namespace memledger::ui
