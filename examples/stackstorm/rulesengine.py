#!/usr/bin/python3
"""A stand-in for StackStorm's st2rulesengine, as its Helm chart runs it.

Like the real one, it says "RulesEngine started" before it has connected to
RabbitMQ: it connects a little later, registers its consumer on its work
queue, answers pings on a queue of its own (the liveness the chart's
maintainers proposed: "a ping message to the MQ and ... a pong"), and then
says READY=1 on $NOTIFY_SOCKET, as a daemon tells systemd. It holds its
connection from then on, until one of two files appears:

    MQ_LOST_FILE  its connection drops: it logs "connection to MQ lost",
                  and connects and consumes again a second later;
    STUCK_FILE    it gets stuck: it holds its connection and its consumers,
                  and handles nothing more, pings included, until stopped.

Each file is removed once seen. The broker is AMQP_URL (default
amqp://guest:guest@127.0.0.1:5672/). Needs pika (Debian: python3-pika).
"""
import logging
import os
import socket
import sys
import time

import pika

WORK_QUEUE = "st2.trigger_instances_dispatch.rules_engine"  # the real service's
PING_QUEUE = "st2.rulesengine.ping"
SETUP_TIME = 1.0  # from its start to "RulesEngine started": config, database
CONNECT_DELAY = 1.5  # from "started" to its connection to RabbitMQ
RULES_LOAD_TIME = 1.5  # from its connection to its consumer's registration
RECONNECT_DELAY = 1.0  # after the connection dropped

log = logging.getLogger("st2reactor.rules")


def notify(*assignments):
    """Sends assignments (READY=1, STATUS=...) to $NOTIFY_SOCKET: one
    datagram, as sd_notify(3) does. Without the variable, nothing."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return
    if path.startswith("@"):  # an abstract socket
        path = "\0" + path[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto("\n".join(assignments).encode(), path)


def on_trigger_instance(channel, method, properties, body):
    log.info("Matching rules for trigger instance %s", body.decode(errors="replace"))
    channel.basic_ack(method.delivery_tag)


def on_ping(channel, method, properties, body):
    """Answers as an RPC server does: to the ping's reply_to, with its
    correlation id."""
    channel.basic_publish(
        exchange="",
        routing_key=properties.reply_to,
        body=b"pong",
        properties=pika.BasicProperties(correlation_id=properties.correlation_id),
    )


def connect(url):
    """Connects to RabbitMQ, retrying every second while it is not there."""
    while True:
        try:
            return pika.BlockingConnection(pika.URLParameters(url))
        except pika.exceptions.AMQPConnectionError as e:
            log.warning("Could not connect to RabbitMQ (%r); retrying in 1s", e)
            time.sleep(1)


def taken(path):
    """Whether the file at path (None: no file) exists; it is removed if so."""
    if path is None:
        return False
    try:
        os.remove(path)
        return True
    except FileNotFoundError:
        return False


def main():
    logging.basicConfig(
        stream=sys.stdout, level=logging.INFO, format="%(levelname)s %(name)s [-] (PID=%(process)d) %(message)s"
    )
    logging.getLogger("pika").setLevel(logging.WARNING)
    url = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
    params = pika.URLParameters(url)
    lost_file, stuck_file = os.environ.get("MQ_LOST_FILE"), os.environ.get("STUCK_FILE")

    log.info("Using config files: /etc/st2/st2.conf")
    time.sleep(SETUP_TIME)
    log.info("RulesEngine started.")
    notify("STATUS=connecting to RabbitMQ")
    time.sleep(CONNECT_DELAY)
    said_ready = False
    while True:
        connection = connect(url)
        log.info("Connected to amqp://%s:%s//", params.host, params.port)
        channel = connection.channel()
        channel.queue_declare(PING_QUEUE)
        channel.basic_consume(PING_QUEUE, on_ping, auto_ack=True)
        channel.queue_declare(WORK_QUEUE)
        notify("STATUS=loading rules")
        connection.sleep(RULES_LOAD_TIME)  # answers pings meanwhile
        channel.basic_consume(WORK_QUEUE, on_trigger_instance)
        log.info("Consuming from %s", WORK_QUEUE)
        if said_ready:  # READY=1 is said once a run
            notify("STATUS=consuming " + WORK_QUEUE)
        else:
            notify("READY=1", "STATUS=consuming " + WORK_QUEUE)
            said_ready = True
        while True:
            connection.process_data_events(time_limit=0.2)
            if taken(lost_file):
                log.error("connection to MQ lost; reconnecting in %gs", RECONNECT_DELAY)
                connection.close()
                notify("STATUS=reconnecting to RabbitMQ")
                time.sleep(RECONNECT_DELAY)
                break
            if taken(stuck_file):
                log.error("Stuck in a rule's evaluation: no more trigger instances (or pings) handled")
                while True:
                    time.sleep(3600)


if __name__ == "__main__":
    main()
