from datetime import datetime


def parse_day(text):
    return datetime.strptime(text, "%Y-%d-%m").date()


def weekday_name(text):
    return parse_day(text).strftime("%A")
