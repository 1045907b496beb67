#!/usr/bin/python3
"""A stand-in desktop notification server for tests: owns
org.freedesktop.Notifications on the session bus and appends one JSON line
per Notify call (summary, body, urgency) to the file named on the command
line. Needs python3-dbus and python3-gi (the Debian system python)."""
import json, sys
import dbus, dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

OUT = sys.argv[1]


class Server(dbus.service.Object):
    n = 0

    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i",
                         out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        Server.n += 1
        with open(OUT, "a") as f:
            f.write(json.dumps({"app": str(app), "summary": str(summary), "body": str(body),
                                "urgency": int(hints.get("urgency", -1))}) + "\n")
        return dbus.UInt32(Server.n)

    @dbus.service.method("org.freedesktop.Notifications", out_signature="as")
    def GetCapabilities(self):
        return ["body"]


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName("org.freedesktop.Notifications", bus)
Server(bus, "/org/freedesktop/Notifications")
open(OUT + ".ready", "w").close()
GLib.MainLoop().run()
