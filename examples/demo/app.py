"""A small program with deliberate mistakes, for squiggle to find."""

from shapes import Circle


def describe(circle: Circle) -> str:
    label: int = "circle"
    return f"{label} with area {circle.area():.2f}"


def main() -> None:
    print(describe(Circle(2.0)))
    print(totl)


if __name__ == "__main__":
    main()
