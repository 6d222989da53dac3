// SPDX-License-Identifier: MIT
#pragma once

#include <QFont>
#include <QObject>
#include <QRect>

#include "core/formats/deck.h"

class QMainWindow;
class QWidget;

namespace memledger::ui {

class Document;

// Talk mode: the window full screen with large fonts, the plan panel hidden
// (optionally), and a deck of presets stepped with the arrow keys (Page
// Up/Down and Space too, as presenter remotes send); Escape leaves and puts
// the user's document back exactly as it was. Slides are shown, never
// edited: they touch neither the undo history nor the saved state.
class TalkMode : public QObject
{
    Q_OBJECT
public:
    TalkMode(QMainWindow *window, QWidget *controls, Document *document, QObject *parent = nullptr);

    bool isActive() const { return m_active; }
    int slide() const { return m_slide; }
    int slideCount() const { return static_cast<int>(m_deck.slides.size()); }
    // What the current slide opens on (the deck's "show"; empty: the window as it is).
    SlideShow show() const;

    void start(const Deck &deck, bool hideControls = true);
    void stop();
    void step(int delta);

Q_SIGNALS:
    void started();
    void slideChanged(int slide, int count);
    void stopped();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QMainWindow *m_window;
    QWidget *m_controls;
    Document *m_document;
    Deck m_deck;
    Config m_savedLedgerConfig; // the user's document when the talk began: its last valid plan,
    Config m_savedConfig; // then what its controls held (maybe invalid)
    int m_slide = 0;
    bool m_active = false;
    bool m_wasMaximized = false;
    QRect m_geometry; // the window's before the talk, given back on leaving
    bool m_controlsWereVisible = true;
    QFont m_font;
};

} // namespace memledger::ui
