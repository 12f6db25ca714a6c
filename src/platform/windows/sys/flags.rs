//! A bit set type in the manner of the `bitflags` types rustix's calls take.

macro_rules! flag_set {
    ($(#[$m:meta])* $name:ident: $t:ty { $($(#[$fm:meta])* $flag:ident = $v:expr;)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name($t);

        impl $name {
            $($(#[$fm])* pub const $flag: $name = $name($v);)*
            pub const fn empty() -> $name {
                $name(0)
            }
            pub const fn bits(self) -> $t {
                self.0
            }
            pub const fn from_bits_retain(bits: $t) -> $name {
                $name(bits)
            }
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            pub const fn intersects(self, other: $name) -> bool {
                self.0 & other.0 != 0
            }
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
            pub const fn union(self, other: $name) -> $name {
                $name(self.0 | other.0)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, o: $name) -> $name {
                $name(self.0 | o.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, o: $name) {
                self.0 |= o.0;
            }
        }

        impl std::ops::BitAnd for $name {
            type Output = $name;
            fn bitand(self, o: $name) -> $name {
                $name(self.0 & o.0)
            }
        }

        impl std::ops::Sub for $name {
            type Output = $name;
            fn sub(self, o: $name) -> $name {
                $name(self.0 & !o.0)
            }
        }

        impl std::ops::SubAssign for $name {
            fn sub_assign(&mut self, o: $name) {
                self.0 &= !o.0;
            }
        }
    };
}
