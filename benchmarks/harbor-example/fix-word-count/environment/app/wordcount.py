import sys


def count_words(path):
    total = 0
    with open(path) as handle:
        for line in handle:
            total += len(line.split(" ")) if line.strip()[0] else 0
    return total


if __name__ == "__main__":
    print(count_words(sys.argv[1]))
