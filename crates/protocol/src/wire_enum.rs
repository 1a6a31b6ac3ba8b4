//! The one way a closed set crosses the wire as a string: `wire_enum!` declares the enum with each
//! variant's exact wire name (and older names it still reads), and gives it `as_str`, `ALL`, `Display` and a `FromStr` that refuses
//! any other name with the crate's `ParseError`.

/// Declares a closed set whose variants travel as the given strings.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $wire:literal $(| $alias:literal)*,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$variant_meta])* #[serde(rename = $wire $(, alias = $alias)*)] $variant,)+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::ParseError;

            fn from_str(s: &str) -> Result<Self, $crate::ParseError> {
                match s {
                    $($wire $(| $alias)* => Ok(Self::$variant),)+
                    _ => Err($crate::ParseError::Unknown {
                        set: stringify!($name),
                        name: s.to_owned(),
                        allowed: &[$($wire),+],
                    }),
                }
            }
        }
    };
}
