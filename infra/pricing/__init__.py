"""What a stack costs: the price table (`table`), the cost of a stack's config (`cost`), its
budget (`budget`) and the table's refresh from the user's own account (`refresh`)."""
