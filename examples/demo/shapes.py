"""Shapes for the squiggle demo."""

from dataclasses import dataclass


@dataclass
class Circle:
    radius: float

    def area(self) -> float:
        return 3.14159 * self.radius**2

    def grow(self, by: float) -> "Circle":
        return Circle(self.radius + by, colour="red")
